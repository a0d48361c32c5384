import EventGraph
import Foundation
import TestSupport
import Testing

/// Live queries across processes (Docs/services.md, "Live queries"): another process's
/// commits wake the query through the store's notifier.
@Suite("Live queries across processes")
struct LiveQueryProcessTests {
  struct TimedOut: Error, CustomStringConvertible {
    let seconds: Double
    var description: String { "no result within \(seconds) s" }
  }

  /// Runs `body`, failing instead of hanging past `seconds` (a generous bound: it turns a
  /// missed wake-up into a failure, and says nothing of speed).
  static func within<T: Sendable>(seconds: Double, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
    try await withThrowingTaskGroup(of: T?.self) { group in
      group.addTask { try await body() }
      group.addTask {
        try await Task.sleep(for: .seconds(seconds))
        return nil
      }
      defer { group.cancelAll() }
      guard let first = try await group.next(), let value = first else {
        throw TimedOut(seconds: seconds)
      }
      return value
    }
  }

  @Test("a live query follows another process's commits to a result equal to a fresh fetch, each change applying")
  func otherProcess() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    #expect(try ToolRunner.run("StressWriter", [path, "--count", "0"]).status == 0)
    let store = try EventStore(path: path)
    let live = try store.observe("Item", where: "batch > 10", sortedBy: [SortDescriptor("payload")])
    let (results, writer) = try await Self.within(seconds: 120) { () async throws -> ([LiveResult], Child) in
      var iterator = live.makeAsyncIterator()
      // The first result before the other process starts: every later one is its doing.
      var all = [try #require(try iterator.step())]
      let writer = try Child("StressWriter", [path, "--count", "30", "--per-commit", "3", "--pause", "0.005"])
      while let result = try await iterator.next() {
        all.append(result)
        if result.objects.count == 60 { break }
      }
      return (all, writer)
    }
    #expect(writer.finish(seconds: 120) == 0, "\(writer.errorOutput)")
    #expect(results.count > 1 && results[0].objects.isEmpty)
    var mirror: [ObjectID] = []
    for r in results {
      mirror = r.changes.apply(to: mirror) { r.objects[$0] }
      #expect(mirror == r.objects)
    }
    #expect(mirror == (try store.fetch("Item", where: "batch > 10", sortedBy: [SortDescriptor("payload")]).objects))
  }
}
