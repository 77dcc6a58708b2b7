// The registry of live ForkSafeMutexes and the fork handlers over it.
#include "sfc/fork_safe_mutex.hpp"

#include <pthread.h>

namespace sfc {

struct ForkSafeMutexes {
  std::mutex lock;  // guards the list; held from before fork() to after it
  ForkSafeMutex* first = nullptr;

  static ForkSafeMutexes& get() {
    // Never destroyed: a mutex of a static object may outlive any other static.
    static ForkSafeMutexes& registry = *[] {
      auto* r = new ForkSafeMutexes;
      pthread_atfork([] { get().lock_all(); }, [] { get().unlock_all(); }, [] { get().unlock_all(); });
      return r;
    }();
    return registry;
  }

  void lock_all() {
    lock.lock();
    for (ForkSafeMutex* m = first; m; m = m->next_) m->mutex_.lock();
  }
  void unlock_all() {
    for (ForkSafeMutex* m = first; m; m = m->next_) m->mutex_.unlock();
    lock.unlock();
  }
};

ForkSafeMutex::ForkSafeMutex() {
  ForkSafeMutexes& r = ForkSafeMutexes::get();
  const std::lock_guard guard(r.lock);
  next_ = r.first;
  if (next_) next_->previous_ = this;
  r.first = this;
}

ForkSafeMutex::~ForkSafeMutex() {
  ForkSafeMutexes& r = ForkSafeMutexes::get();
  const std::lock_guard guard(r.lock);
  if (previous_)
    previous_->next_ = next_;
  else
    r.first = next_;
  if (next_) next_->previous_ = previous_;
}

}  // namespace sfc
