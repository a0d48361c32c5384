import EventGraph
import Foundation

/// `eventtool log STORE --follow`: the log, then every new commit as it lands.
///
/// Commits from this or any other process are printed until interrupted, `--commits N`
/// were printed, or `--to SEQ` is passed. With `--consumer NAME` the start is the
/// consumer's saved position, and the position is saved as commits are printed (at least
/// once: after a kill, the commits printed since the last save are printed again).
enum LogFollow {
  static func run(_ a: ParsedArguments, _ io: ToolIO, from: UInt64, to: UInt64, json: Bool) throws {
    if a.value("object") != nil { throw ToolError.usage("--object cannot be followed; drop --follow") }
    let limit = try a.int("commits") ?? .max
    guard limit > 0 else { throw ToolError.usage("--commits needs a number of commits (1 or more)") }
    let consumerName = a.value("consumer")
    let store = try openStore(try a.required("STORE"), writing: consumerName != nil)
    let consumer = try consumerName.map { try store.consumer($0) }
    let after = try consumer?.position() ?? (from > 0 ? from - 1 : 0)
    try runBlocking {
      var commits = store.events(after: after).makeAsyncIterator()
      var printed = 0
      var unsaved = 0
      while printed < limit, let commit = try await commits.next() {
        try store.read { s in LogCommand.show(commit, in: s, io: io, json: json, from: from, to: to, only: nil) }
        printed += 1
        unsaved += 1
        let last = printed == limit || commit.lastSequence >= to
        // Save when caught up (each commit), or every 100 commits while catching up.
        if let consumer, last || unsaved >= 100 || !commits.hasBuffered {
          try await consumer.acknowledge(commit)
          unsaved = 0
        }
        if last { return }
      }
    }
  }
}

/// Runs async work from a synchronous command, blocking the calling thread (the main
/// thread, which is not one of the tasks' threads) until it ends.
func runBlocking(_ body: @escaping @Sendable () async throws -> Void) throws {
  final class Outcome: @unchecked Sendable {
    // SAFETY (@unchecked Sendable): written by the task before it signals `done`, read after.
    var error: (any Error)?
    let done = DispatchSemaphore(value: 0)
  }
  let outcome = Outcome()
  Task {
    do { try await body() } catch { outcome.error = error }
    outcome.done.signal()
  }
  outcome.done.wait()
  if let error = outcome.error { throw error }
}
