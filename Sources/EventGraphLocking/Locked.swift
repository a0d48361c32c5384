// The one lock type of the package: `Mutex` in every ordinary build; a pthread mutex when
// built for the sanitizers (`Tools/sanitize` defines EVENTGRAPH_SANITIZE). On Linux the
// Synchronization library's `Mutex` waits through futex calls in uninstrumented code, so
// ThreadSanitizer cannot see the ordering it creates and reports a race on every value it
// guards; `pthread_mutex_lock` is intercepted by the sanitizer runtime, so the ordering is
// visible and a real race under the lock is still reported.

#if EVENTGRAPH_SANITIZE
  #if canImport(Glibc)
    import Glibc
  #else
    import Darwin
  #endif

  /// A value reachable only while a lock is held (the sanitizer build's variant).
  // SAFETY: `value` is read and written only inside `withLock`, between
  // `pthread_mutex_lock` and `pthread_mutex_unlock` on `mutex`, which this instance owns;
  // the ordinary build's `Mutex` variant gives the compiler's checks for the same API.
  public final class Locked<Value>: @unchecked Sendable {
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    public init(_ initialValue: consuming sending Value) {
      mutex = .allocate(capacity: 1)
      mutex.initialize(to: pthread_mutex_t())
      pthread_mutex_init(mutex, nil)
      value = initialValue
    }

    deinit {
      pthread_mutex_destroy(mutex)
      mutex.deallocate()
    }

    /// Runs `body` with the value while holding the lock.
    public func withLock<Result, E: Error>(
      _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
      pthread_mutex_lock(mutex)
      defer { pthread_mutex_unlock(mutex) }
      return try body(&value)
    }
  }
#else
  import Synchronization

  /// A value reachable only while a lock is held: Synchronization's `Mutex`.
  public struct Locked<Value: ~Copyable>: ~Copyable, Sendable {
    @usableFromInline let mutex: Mutex<Value>

    public init(_ initialValue: consuming sending Value) {
      mutex = Mutex(initialValue)
    }

    /// Runs `body` with the value while holding the lock.
    @inlinable
    public borrowing func withLock<Result: ~Copyable, E: Error>(
      _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
      try mutex.withLock(body)
    }
  }
#endif
