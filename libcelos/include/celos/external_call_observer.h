// Who hears of the calls celos makes to external services and file systems, and the decorators
// that tell it. Metrics (celos/metrics.h) is the observer of celos-server; the decorators live
// with the adapters (io/instrumented.cc), which so know this interface and nothing of metrics.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "celos/external_service.h"
#include "celos/file_system.h"
#include "celos/workflow.h"

namespace celos {

class ExternalCallObserver {
 public:
  virtual ~ExternalCallObserver() = default;
  // One call that ended: the service ("oozie", "command", "slurm", "webhdfs", "file"), the
  // operation ("submit", "start", "status", "kill", "exists", "delete"), how long it took and
  // whether it succeeded. Called concurrently from the step's and the API's threads.
  virtual void on_external_call(std::string_view service, std::string_view operation,
                                double seconds, bool ok) = 0;
};

// A service whose calls are timed into `observer` (service label = the service's kind()).
ExternalServicePtr instrument_service(ExternalServicePtr service, ExternalCallObserver& observer);
// A WorkflowSource whose workflows' services are instrumented (the JS loader's services stay
// untouched; the same service object keeps one decorator across loads).
std::unique_ptr<WorkflowSource> instrument_workflow_source(WorkflowSource& inner,
                                                           ExternalCallObserver& observer);
// Times exists() and remove() of the resolved file systems: service label `file` for file: URIs,
// `default_service` for the empty URI (the default file system), `webhdfs` otherwise.
std::unique_ptr<FileSystemResolver> instrument_file_systems(FileSystemResolver& inner,
                                                            ExternalCallObserver& observer,
                                                            std::string default_service);

}  // namespace celos
