// Duktape's hooks for memory and time. The allocator keeps a size header in front of every
// block because Duktape's free and realloc do not pass the old size, and we need it to keep
// count. Refusing an allocation makes Duktape run its garbage collector and then throw a
// RangeError inside the script: the file's error, not the server's.
#include "js/js_heap.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace celos::js {
namespace {

// Keeps the blocks handed to Duktape aligned as malloc's are.
constexpr std::size_t kHeader = alignof(std::max_align_t);
constexpr std::size_t kReportingHeadroom = 4 * 1024 * 1024;

void* hook_alloc(void* udata, duk_size_t size) {
  return static_cast<JsHeap*>(udata)->allocate(size);
}
void* hook_realloc(void* udata, void* pointer, duk_size_t size) {
  return static_cast<JsHeap*>(udata)->reallocate(pointer, size);
}
void hook_free(void* udata, void* pointer) { static_cast<JsHeap*>(udata)->release(pointer); }

// Only reached for errors outside any protected call, which we never make: unwinding with a
// C++ exception keeps the server alive (the heap is then abandoned by its owner).
[[noreturn]] void hook_fatal(void*, const char* message) {
  throw std::runtime_error(std::string("JavaScript engine fatal error: ") +
                           (message ? message : "unknown"));
}

std::size_t stored_size(void* block) {
  std::size_t size;
  std::memcpy(&size, static_cast<char*>(block) - kHeader, sizeof size);
  return size;
}

}  // namespace

std::shared_ptr<JsHeap> JsHeap::create(std::size_t max_bytes) {
  std::shared_ptr<JsHeap> heap(new JsHeap(max_bytes));
  heap->context_ = duk_create_heap(hook_alloc, hook_realloc, hook_free, heap.get(), hook_fatal);
  if (heap->context_ == nullptr) return nullptr;
  return heap;
}

JsHeap::~JsHeap() {
  if (context_ != nullptr) duk_destroy_heap(context_);
}

void JsHeap::arm(std::chrono::milliseconds budget) {
  armed_ = true;
  timed_out_ = false;
  refused_allocation_ = false;
  // The real clock on purpose (also in deadline_passed()): the budget bounds the real time a
  // script runs.
  deadline_ = system_clock().monotonic() + budget;
}

void JsHeap::disarm() { armed_ = false; }

bool JsHeap::deadline_passed() {
  if (!armed_) return false;
  if (!timed_out_ && system_clock().monotonic() > deadline_) timed_out_ = true;
  return timed_out_;
}

bool JsHeap::over_budget(std::size_t more) {
  // Outside an evaluation (reading the error of a script that filled its heap) a little
  // headroom spares Duktape a garbage collection storm on every allocation.
  const std::size_t limit = armed_ ? max_bytes_ : max_bytes_ + kReportingHeadroom;
  if (more > limit || in_use_ + more > limit) {
    refused_allocation_ = true;
    return true;
  }
  // Near the memory limit Duktape collects garbage on every allocation and its executor checks
  // the time too rarely to notice: past the deadline, allocations fail, which ends the script.
  if (armed_ && (++allocations_ % 16 == 0 || timed_out_) && deadline_passed()) return true;
  return false;
}

void* JsHeap::allocate(std::size_t size) {
  if (size == 0) return nullptr;
  if (over_budget(size)) return nullptr;
  void* raw = std::malloc(size + kHeader);
  if (raw == nullptr) return nullptr;
  std::memcpy(raw, &size, sizeof size);
  in_use_ += size;
  return static_cast<char*>(raw) + kHeader;
}

void* JsHeap::reallocate(void* pointer, std::size_t size) {
  if (pointer == nullptr) return allocate(size);
  if (size == 0) {
    release(pointer);
    return nullptr;
  }
  const std::size_t old_size = stored_size(pointer);
  if (size > old_size && over_budget(size - old_size)) return nullptr;
  void* raw = std::realloc(static_cast<char*>(pointer) - kHeader, size + kHeader);
  if (raw == nullptr) return nullptr;
  std::memcpy(raw, &size, sizeof size);
  in_use_ = in_use_ - old_size + size;
  return static_cast<char*>(raw) + kHeader;
}

void JsHeap::release(void* pointer) {
  if (pointer == nullptr) return;
  in_use_ -= stored_size(pointer);
  std::free(static_cast<char*>(pointer) - kHeader);
}

}  // namespace celos::js

// Called by Duktape every few thousand bytecode instructions (DUK_USE_EXEC_TIMEOUT_CHECK in
// third_party/duktape/duk_celos_config.h); udata is the heap's JsHeap.
extern "C" int celos_duk_exec_timeout_check(void* udata) {
  return udata != nullptr && static_cast<celos::js::JsHeap*>(udata)->deadline_passed() ? 1 : 0;
}
