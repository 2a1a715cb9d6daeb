#include "celos/trigger.h"

#include <fmt/format.h>

namespace celos {
namespace {

TriggerStatus leaf(std::string type, bool ready, std::string description) {
  return TriggerStatus{std::move(type), ready, std::move(description), {}};
}

class AlwaysTrigger final : public Trigger {
 public:
  Result<TriggerStatus> evaluate(Time, TriggerContext&) const override {
    return leaf("AlwaysTrigger", true, "Always ready");
  }
};

class DelayTrigger final : public Trigger {
 public:
  explicit DelayTrigger(std::int64_t seconds) : seconds_(seconds) {}
  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    const Time until = slot + std::chrono::seconds(seconds_);
    const bool ready = context.now() > until;
    return leaf("DelayTrigger", ready,
                fmt::format("{} {}", ready ? "Ready since" : "Delayed until", format_time(until)));
  }

 private:
  std::int64_t seconds_;
};

class OffsetTrigger final : public Trigger {
 public:
  OffsetTrigger(std::int64_t seconds, TriggerPtr inner)
      : seconds_(seconds), inner_(std::move(inner)) {}
  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    const Time shifted = slot + std::chrono::seconds(seconds_);
    auto inner = inner_->evaluate(shifted, context);
    if (!inner) return inner;
    const bool ready = inner->ready;
    return TriggerStatus{"OffsetTrigger",
                         ready,
                         fmt::format("Nested trigger offset by {} seconds ({}) is {}", seconds_,
                                     format_time(shifted), ready ? "ready" : "not ready"),
                         {std::move(*inner)}};
  }

 private:
  std::int64_t seconds_;
  TriggerPtr inner_;
};

// And/Or evaluate every nested trigger (not short-circuit) so that /trigger-status shows the
// whole tree; the per-step cache in the context keeps repeated checks cheap.
class CombinedTrigger final : public Trigger {
 public:
  CombinedTrigger(bool all, std::vector<TriggerPtr> triggers)
      : all_(all), triggers_(std::move(triggers)) {}
  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    TriggerStatus status{all_ ? "AndTrigger" : "OrTrigger", all_, "", {}};
    for (const TriggerPtr& t : triggers_) {
      auto sub = t->evaluate(slot, context);
      if (!sub) return sub;
      status.ready = all_ ? (status.ready && sub->ready) : (status.ready || sub->ready);
      status.sub_statuses.push_back(std::move(*sub));
    }
    if (all_) {
      status.description =
          status.ready ? "All nested triggers are ready" : "Not all nested triggers are ready";
    } else {
      status.description =
          status.ready ? "One or more nested triggers are ready" : "No nested trigger is ready";
    }
    return status;
  }

 private:
  bool all_;
  std::vector<TriggerPtr> triggers_;
};

class NotTrigger final : public Trigger {
 public:
  explicit NotTrigger(TriggerPtr inner) : inner_(std::move(inner)) {}
  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    auto inner = inner_->evaluate(slot, context);
    if (!inner) return inner;
    const bool ready = !inner->ready;
    return TriggerStatus{"NotTrigger",
                         ready,
                         ready ? "Nested trigger is not ready" : "Nested trigger is ready",
                         {std::move(*inner)}};
  }

 private:
  TriggerPtr inner_;
};

class SuccessTrigger final : public Trigger {
 public:
  explicit SuccessTrigger(std::string workflow_id) : workflow_id_(std::move(workflow_id)) {}
  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    auto ok = context.slot_succeeded(workflow_id_, slot);
    if (!ok) return tl::unexpected(ok.error());
    return leaf("SuccessTrigger", *ok,
                fmt::format("Slot {} of workflow {} is {}", format_time(slot), workflow_id_,
                            *ok ? "successful" : "not successful"));
  }

 private:
  std::string workflow_id_;
};

class HdfsCheckTrigger final : public Trigger {
 public:
  HdfsCheckTrigger(std::string path, std::string fs_uri)
      : path_(std::move(path)), fs_uri_(std::move(fs_uri)) {}
  Result<TriggerStatus> evaluate(Time slot, TriggerContext& context) const override {
    const std::string path = replace_time_variables(path_, slot);
    auto exists = context.path_exists(fs_uri_, path);
    if (!exists) return tl::unexpected(exists.error());
    return leaf("HDFSCheckTrigger", *exists,
                fmt::format("HDFS path {}{} is {}", display_prefix(), path,
                            *exists ? "ready" : "not ready"));
  }

 private:
  // "hdfs://nn:8020" + "/logs/..." reads as a URI; "file:///" + "/x" would double the slash.
  std::string display_prefix() const {
    std::string prefix = fs_uri_;
    while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
    if (prefix == "file:") return "file://";
    return prefix;
  }

  std::string path_;
  std::string fs_uri_;
};

}  // namespace

TriggerPtr make_always_trigger() { return std::make_shared<AlwaysTrigger>(); }
TriggerPtr make_delay_trigger(std::int64_t seconds) {
  return std::make_shared<DelayTrigger>(seconds);
}
TriggerPtr make_offset_trigger(std::int64_t seconds, TriggerPtr inner) {
  return std::make_shared<OffsetTrigger>(seconds, std::move(inner));
}
TriggerPtr make_and_trigger(std::vector<TriggerPtr> triggers) {
  return std::make_shared<CombinedTrigger>(true, std::move(triggers));
}
TriggerPtr make_or_trigger(std::vector<TriggerPtr> triggers) {
  return std::make_shared<CombinedTrigger>(false, std::move(triggers));
}
TriggerPtr make_not_trigger(TriggerPtr inner) {
  return std::make_shared<NotTrigger>(std::move(inner));
}
TriggerPtr make_success_trigger(std::string workflow_id) {
  return std::make_shared<SuccessTrigger>(std::move(workflow_id));
}
TriggerPtr make_hdfs_check_trigger(std::string path, std::string fs_uri) {
  return std::make_shared<HdfsCheckTrigger>(std::move(path), std::move(fs_uri));
}

}  // namespace celos
