#if canImport(Glibc)
  import Glibc
#endif

/// Wakes a waiting thread when a file is written by any process: how a follower of the log
/// learns that another process may have committed.
///
/// LMDB (without `MDB_WRITEMAP`, which this package never uses) writes its pages and the
/// meta page of each commit with `pwrite`, and Linux's inotify reports every such write to
/// `data.mdb`, whichever process made it. A write is reported when it happens, which can be
/// a moment before the commit becomes visible to a new read transaction (LMDB publishes the
/// transaction ID in `lock.mdb` right after the meta page): a caller that finds nothing new
/// after a wake should look again shortly.
///
/// ```swift
/// guard let watcher = FileChangeWatcher(path: dir + "/data.mdb") else { /* poll instead */ }
/// while running {
///   if watcher.wait(timeoutMilliseconds: 1000) == .changed { /* read the log's end */ }
/// }
/// ```
///
/// Where inotify is missing (other systems, some network file systems) the initializer
/// returns `nil` and the caller falls back to polling.
public final class FileChangeWatcher: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): the descriptors are set once in init and closed in deinit.
  // `wait` is called from one thread at a time; `interrupt` from any thread is one write(2)
  // to a pipe, which the kernel serializes.
  private let changes: Int32
  private let wakeRead: Int32
  private let wakeWrite: Int32

  /// What ended a ``wait(timeoutMilliseconds:)``.
  public enum Wake: Sendable, Hashable {
    /// The file was written (every pending notification was consumed).
    case changed
    /// ``interrupt()`` was called.
    case interrupted
    /// The time ran out with no write.
    case timedOut
  }

  /// Watches `path` (a file that exists); `nil` when change notification is unavailable.
  public init?(path: String) {
    #if canImport(Glibc)
      let fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
      guard fd >= 0 else { return nil }
      var pair: [Int32] = [-1, -1]
      guard inotify_add_watch(fd, path, UInt32(IN_MODIFY)) >= 0, pipe(&pair) == 0 else {
        close(fd)
        return nil
      }
      for end in pair {
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
      }
      changes = fd
      wakeRead = pair[0]
      wakeWrite = pair[1]
    #else
      return nil
    #endif
  }

  deinit {
    #if canImport(Glibc)
      close(changes)
      close(wakeRead)
      close(wakeWrite)
    #endif
  }

  /// Blocks until the file is written, ``interrupt()`` is called, or the time runs out.
  public func wait(timeoutMilliseconds: Int32) -> Wake {
    #if canImport(Glibc)
      var fds = [
        pollfd(fd: changes, events: Int16(POLLIN), revents: 0),
        pollfd(fd: wakeRead, events: Int16(POLLIN), revents: 0),
      ]
      guard poll(&fds, 2, timeoutMilliseconds) > 0 else { return .timedOut }  // EINTR counts as a timeout
      if fds[1].revents != 0 {
        drain(wakeRead)
        return .interrupted
      }
      if fds[0].revents != 0 {
        drain(changes)
        return .changed
      }
      return .timedOut
    #else
      return .timedOut
    #endif
  }

  /// Ends the current or next ``wait(timeoutMilliseconds:)`` at once, from any thread.
  public func interrupt() {
    #if canImport(Glibc)
      var byte: UInt8 = 1
      _ = write(wakeWrite, &byte, 1)
    #endif
  }

  /// Reads a non-blocking descriptor until it is empty.
  private func drain(_ fd: Int32) {
    #if canImport(Glibc)
      var buffer = [UInt8](repeating: 0, count: 4096)
      while read(fd, &buffer, buffer.count) > 0 {}
    #endif
  }
}
