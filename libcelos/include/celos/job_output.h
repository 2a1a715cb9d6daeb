// The output of a slot's command or Slurm job (SPEC §7.2, §13 slot log), read from its job
// directory <jobs>/<workflow>/<yyyy-mm-dd>/<HH:MM:SS.sssZ>/<external id>/{stdout,stderr}.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "celos/error.h"
#include "celos/slot.h"

namespace celos {

inline constexpr std::size_t kDefaultLogTail = 65536;
inline constexpr std::size_t kMaxLogTail = std::size_t{16} << 20;

// The last `tail` bytes (at most) of `stream` ("stdout" or "stderr") of the job `external_id`
// of `slot`, without reading the rest of the file (it may be gigabytes). A tail that starts in
// the middle of a UTF-8 character starts after it. kNotFound when the job or the stream does
// not exist; kInvalid for an external id or stream that could name a path outside `jobs_dir`
// (a `/`, `..`, a control character), or a file that resolves outside it (a symbolic link).
[[nodiscard]] Result<std::string> read_job_output(const std::string& jobs_dir, const SlotId& slot,
                                                  const std::string& external_id,
                                                  std::string_view stream, std::size_t tail);

}  // namespace celos
