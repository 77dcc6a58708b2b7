// A mutex that fork() cannot leave locked in the child.
//
// A thread holding a plain mutex when another thread forks leaves the child a
// locked copy that nobody will ever unlock: the child's next lock() hangs.
// Every live ForkSafeMutex is locked by the forking thread before fork() and
// unlocked by it after, in the parent and in the child (pthread_atfork), so
// the child's copies are always free. Hold one only briefly, and never while
// taking another: the forking thread takes them all, one after the other.
#pragma once
#include <mutex>

namespace sfc {

class ForkSafeMutex {
 public:
  ForkSafeMutex();
  ~ForkSafeMutex();
  ForkSafeMutex(const ForkSafeMutex&) = delete;
  ForkSafeMutex& operator=(const ForkSafeMutex&) = delete;

  void lock() { mutex_.lock(); }
  void unlock() { mutex_.unlock(); }
  bool try_lock() { return mutex_.try_lock(); }

 private:
  friend struct ForkSafeMutexes;
  std::mutex mutex_;
  ForkSafeMutex* next_ = nullptr;  // the live mutexes, a list guarded by the registry's lock
  ForkSafeMutex* previous_ = nullptr;
};

}  // namespace sfc
