// The contract every StateDatabase keeps (SPEC §5, §11, §16): one routine, run by the tests of
// each backend (file on disk, file in memory, PostgreSQL). `db` must be empty.
#pragma once

#include "celos/state_db.h"

namespace celos::testing {

void check_state_database_contract(StateDatabase& db);

}  // namespace celos::testing
