// celos-next-times CRON [TIME] [COUNT]: prints the next COUNT (default 3) firing times of a
// Quartz cron expression at or after TIME (ISO 8601 UTC, default now), using the installed
// libcelos. Exit status 2 on a bad expression or time, with celos's message on stderr.
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <string>

#include <celos/cron.h>
#include <celos/time.h>

int main(int argc, char** argv) {
  if (argc < 2 || argc > 4) {
    std::cerr << "usage: celos-next-times CRON [TIME] [COUNT]\n";
    return 2;
  }
  auto cron = celos::CronExpression::parse(argv[1]);
  if (!cron) {
    std::cerr << "celos-next-times: " << cron.error().message << "\n";
    return 2;
  }
  celos::Time from =
      std::chrono::time_point_cast<std::chrono::milliseconds>(std::chrono::system_clock::now());
  if (argc >= 3) {
    auto parsed = celos::parse_time(argv[2]);
    if (!parsed) {
      std::cerr << "celos-next-times: " << parsed.error().message << "\n";
      return 2;
    }
    from = *parsed;
  }
  const int count = argc == 4 ? std::atoi(argv[3]) : 3;
  for (int i = 0; i < count; ++i) {
    auto next = cron->next_at_or_after(from);
    if (!next) break;
    std::cout << celos::format_time(*next) << "\n";
    from = *next + std::chrono::seconds(1);
  }
  return 0;
}
