import EventGraphLocking
import Foundation
internal import LMDB

/// Wakes followers of the log when a commit lands.
///
/// - Commits of this process (the writer thread, ``EventStore/write(metadata:_:)``) call
///   ``committed(lastSequence:)``, which resumes every waiter at once.
/// - Commits of other processes are seen by a watcher thread, started with the first
///   waiter: it blocks on a ``FileChangeWatcher`` (inotify on `data.mdb`), reads the log's
///   end in a short read transaction when the file changes, and wakes the waiters when the
///   end moved. Every second it looks anyway, in case a notification was missed.
/// - Without inotify it polls instead, every millisecond at first and backing off to every
///   100 ms while nothing changes.
///
/// A follower takes ``generation`` *before* it reads the log and passes it to
/// ``wait(after:)``; any commit that lands after its read bumps the generation, so a
/// wake-up cannot fall between the read and the wait.
final class LogNotifier: Sendable {
  private struct State {
    var generation: UInt64 = 0
    /// The last sequence known to be in the log (from either source).
    var known: UInt64 = 0
    var waiters: [UInt64: CheckedContinuation<Void, any Error>] = [:]
    var nextWaiter: UInt64 = 0
    var watcher: WatcherState = .notStarted
    var stopping = false
  }
  private enum WatcherState {
    case notStarted
    case running(FileChangeWatcher?, DispatchSemaphore)
    case stopped
  }

  private let state = Locked(State())
  private let dataFile: String
  /// Reads the log's last sequence in a short read transaction; `nil` on failure.
  private let readLogEnd: @Sendable () -> UInt64?

  init(dataFile: String, readLogEnd: @escaping @Sendable () -> UInt64?) {
    self.dataFile = dataFile
    self.readLogEnd = readLogEnd
  }

  /// Bumped by every wake-up.
  var generation: UInt64 { state.withLock { $0.generation } }

  /// A commit of this process landed: wake every follower.
  func committed(lastSequence: UInt64) {
    let waiters = state.withLock { s in
      s.known = max(s.known, lastSequence)
      return wakeLocked(&s)
    }
    for w in waiters { w.resume() }
  }

  private func wakeLocked(_ s: inout State) -> [CheckedContinuation<Void, any Error>] {
    s.generation += 1
    let waiters = Array(s.waiters.values)
    s.waiters.removeAll(keepingCapacity: true)
    return waiters
  }

  /// Suspends until the generation passes `generation`.
  ///
  /// - Throws: `CancellationError` when the task is cancelled.
  func wait(after generation: UInt64) async throws {
    startWatcherIfNeeded()
    let id = state.withLock { s in
      s.nextWaiter += 1
      return s.nextWaiter
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { (c: CheckedContinuation<Void, any Error>) in
        enum Now { case wait, resume, cancel }
        let now: Now = state.withLock { s in
          if Task.isCancelled { return .cancel }
          if s.generation > generation || s.stopping { return .resume }
          s.waiters[id] = c
          return .wait
        }
        switch now {
        case .wait: break
        case .resume: c.resume()
        case .cancel: c.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      let c = state.withLock { $0.waiters.removeValue(forKey: id) }
      c?.resume(throwing: CancellationError())
    }
  }

  // MARK: - The watcher thread

  private func startWatcherIfNeeded() {
    let start = state.withLock { s -> Bool in
      guard case .notStarted = s.watcher, !s.stopping else { return false }
      s.watcher = .running(FileChangeWatcher(path: dataFile), DispatchSemaphore(value: 0))
      return true
    }
    guard start else { return }
    let thread = Thread { [self] in watch() }
    thread.name = "EventGraph log watcher"
    thread.start()
  }

  private func watch() {
    guard case .running(let watcher, let finished) = state.withLock({ $0.watcher }) else { return }
    defer { finished.signal() }
    var pollDelay = 0.001
    // A write was seen but the log had not moved yet: a commit is under way (its data pages
    // come before its fsync and meta page), so look every millisecond for a while.
    var pendingSince: Double?
    while !state.withLock({ $0.stopping }) {
      let wake: FileChangeWatcher.Wake
      if let watcher {
        wake = watcher.wait(timeoutMilliseconds: pendingSince == nil ? 1000 : 1)
      } else {
        Thread.sleep(forTimeInterval: pollDelay)
        wake = .timedOut
      }
      if wake == .interrupted { continue }
      guard state.withLock({ !$0.waiters.isEmpty }) else {
        pollDelay = 0.05  // nobody waits: polling (without inotify) can slow down
        pendingSince = nil
        continue
      }
      if wakeIfLogMoved() {
        pollDelay = 0.001
        pendingSince = nil
        continue
      }
      let now = ProcessInfo.processInfo.systemUptime
      if wake == .changed {
        // LMDB publishes a commit in lock.mdb just after writing its meta page: look again
        // a moment later before waiting for the next write.
        Thread.sleep(forTimeInterval: 0.000_05)
        if wakeIfLogMoved() {
          pendingSince = nil
          continue
        }
        pendingSince = pendingSince ?? now
      } else {
        pollDelay = min(pollDelay * 2, 0.1)
      }
      if let since = pendingSince, now - since > 0.1 { pendingSince = nil }
    }
  }

  /// Reads the log's end; wakes the waiters when it passed what was known.
  private func wakeIfLogMoved() -> Bool {
    guard let end = readLogEnd() else { return false }
    let waiters: [CheckedContinuation<Void, any Error>]? = state.withLock { s in
      guard end > s.known else { return nil }
      s.known = end
      return wakeLocked(&s)
    }
    guard let waiters else { return false }
    for w in waiters { w.resume() }
    return true
  }

  /// Stops the watcher thread (waiting for it) and releases every waiter.
  func shutdown() {
    let (running, waiters): ((FileChangeWatcher?, DispatchSemaphore)?, [CheckedContinuation<Void, any Error>]) =
      state.withLock { s in
        s.stopping = true
        var running: (FileChangeWatcher?, DispatchSemaphore)?
        if case .running(let w, let f) = s.watcher { running = (w, f) }
        s.watcher = .stopped
        return (running, wakeLocked(&s))
      }
    for w in waiters { w.resume() }
    if let (watcher, finished) = running {
      watcher?.interrupt()
      finished.wait()
    }
  }
}
