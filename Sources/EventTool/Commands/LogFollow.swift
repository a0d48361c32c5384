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
    if consumer == nil { return try acrossSwitches(store, io, after: after, limit: limit, json: json, to: to) }
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

extension LogFollow {
  /// Without a consumer (whose positions are per version) the follower goes on across a
  /// switch of the store's version: the old log's last commits, a line on standard error,
  /// then the new version's commits (`Docs/services.md`, "Across a version switch").
  static func acrossSwitches(_ store: EventStore, _ io: ToolIO, after: UInt64, limit: Int, json: Bool, to: UInt64)
    throws
  {
    try runBlocking {
      var printed = 0
      for try await entry in store.followLog(after: after) {
        switch entry {
        case .commit(let commit, let version):
          // --to names a sequence of the version the store was opened at.
          let first = version == store.model.version
          try store.read(version: version) { s in
            LogCommand.show(commit, in: s, io: io, json: json, from: 0, to: first ? to : .max, only: nil)
          }
          printed += 1
          if printed == limit || (first && commit.lastSequence >= to) { return }
        case .switched(let s):
          io.printError(
            "the store switched from version \(s.from) to \(s.to) after sequence \(s.sourceEnd); following version \(s.to) after sequence \(s.position)"
          )
        }
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
