#include "testing/fake_process_runner.h"

#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "testing/source_dir.h"

namespace celos::testing {

std::string program_name(const ProcessRequest& request) {
  if (request.argv.empty()) return "";
  const std::string& program = request.argv[0];
  const auto slash = program.rfind('/');
  return slash == std::string::npos ? program : program.substr(slash + 1);
}

Result<ProcessOutput> FakeProcessRunner::run(const ProcessRequest& request) {
  Handler handler;
  {
    MutexLock lock(mutex_);
    calls_.push_back(request);
    const std::string program = program_name(request);
    auto& queue = queued_[program];
    if (!queue.empty()) {
      auto answer = queue.front();
      queue.erase(queue.begin());
      return answer;
    }
    auto found = handlers_.find(program);
    if (found == handlers_.end()) {
      return fail(fmt::format("fake runner: no answer for {}", describe_command(request.argv)));
    }
    handler = found->second;
  }
  return handler(request);
}

void FakeProcessRunner::answer(const std::string& program, ProcessOutput output) {
  MutexLock lock(mutex_);
  queued_[program].push_back(std::move(output));
}

void FakeProcessRunner::answer(const std::string& program, int exit_code, std::string out,
                               std::string err) {
  answer(program, ProcessOutput{exit_code, std::move(out), std::move(err)});
}

void FakeProcessRunner::answer_error(const std::string& program, std::string message) {
  MutexLock lock(mutex_);
  queued_[program].push_back(fail(std::move(message)));
}

void FakeProcessRunner::on(const std::string& program, Handler handler) {
  MutexLock lock(mutex_);
  handlers_[program] = std::move(handler);
}

std::vector<ProcessRequest> FakeProcessRunner::calls() const {
  MutexLock lock(mutex_);
  return calls_;
}

int FakeProcessRunner::count(const std::string& program) const {
  MutexLock lock(mutex_);
  int n = 0;
  for (const auto& call : calls_) n += program.empty() || program_name(call) == program ? 1 : 0;
  return n;
}

void FakeProcessRunner::clear_calls() {
  MutexLock lock(mutex_);
  calls_.clear();
}

std::string FakeProcessRunner::testdata(const std::string& relative) {
  // "slurm/x.txt" is io/slurm/testdata/x.txt: each room keeps its recordings beside its code.
  const auto slash = relative.find('/');
  if (slash == std::string::npos) throw std::runtime_error("test data names its room: " + relative);
  const std::string path = ::celos::testing::source_dir() + "/libcelos/src/io/" +
                           relative.substr(0, slash) + "/testdata" + relative.substr(slash);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("missing test data " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace celos::testing
