// celos-ui's dataset pages (SPEC §14 "Lineage"): the upstream and downstream slots of a slot, for
// the grid's highlighting, and the list of datasets with their producers and consumers.
#pragma once

#include "celos/http_server.h"
#include "celos/slot.h"
#include "celos/ui.h"

namespace celos {

// GET /lineage?id=W@T: {"upstream": ["<workflow>@<time>", ...], "downstream": [...]} from
// celos-server's /api/v1/lineage (producers of the slot's inputs, consumers of its outputs).
HttpServerResponse ui_lineage(CelosApiReader& reader, const SlotId& slot);

// GET /datasets: an HTML table of celos-server's /api/v1/datasets.
HttpServerResponse ui_datasets(CelosApiReader& reader);

}  // namespace celos
