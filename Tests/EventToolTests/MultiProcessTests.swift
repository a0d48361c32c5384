import EventGraph
import EventTool
import Foundation
import Testing

/// A child process of this package whose standard output is read as it comes, and whose
/// standard error is kept to show when it fails (a sanitizer's report, for one).
///
/// Each pipe is read by a thread of its own with blocking reads, never through
/// `FileHandle.readabilityHandler`: on Linux, tearing down the dispatch read source that
/// handler installs races libdispatch's epoll bookkeeping and now and then crashed the whole
/// test process in `_dispatch_event_loop_drain` (swift-corelibs-libdispatch issue 949), a
/// failure of the harness that said nothing of the code under test.
final class Child: @unchecked Sendable {
  // SAFETY (@unchecked Sendable): `buffer` and `errorBuffer` are only touched under `lock`;
  // the readers' group is itself thread-safe.
  let process = Process()
  private let pipe = Pipe()
  private let errorPipe = Pipe()
  private let lock = NSLock()
  private var buffer = Data()
  private var errorBuffer = Data()
  private let readers = DispatchGroup()

  init(_ executable: String, _ arguments: [String]) throws {
    process.executableURL = ToolRunner.productsDirectory.appendingPathComponent(executable)
    process.arguments = arguments
    process.standardOutput = pipe
    process.standardError = errorPipe
    try process.run()
    drain(pipe.fileHandleForReading) { $0.buffer.append($1) }
    drain(errorPipe.fileHandleForReading) { $0.errorBuffer.append($1) }
  }

  /// Reads `handle` to its end on a thread of its own, handing each chunk to `keep` under
  /// the lock.
  private func drain(_ handle: FileHandle, _ keep: @escaping @Sendable (Child, Data) -> Void) {
    readers.enter()
    let thread = Thread { [self] in
      while case let chunk = handle.availableData, !chunk.isEmpty {  // blocks; empty at the end
        lock.lock()
        keep(self, chunk)
        lock.unlock()
      }
      readers.leave()
    }
    thread.start()
  }

  /// Everything printed so far.
  var output: String {
    lock.lock()
    defer { lock.unlock() }
    return String(decoding: buffer, as: UTF8.self)
  }

  /// Everything printed to standard error so far (all of it once `finish` has returned).
  var errorOutput: String {
    lock.lock()
    defer { lock.unlock() }
    return String(decoding: errorBuffer, as: UTF8.self)
  }

  /// The complete lines printed so far.
  var lines: [Substring] {
    let text = output
    guard let end = text.lastIndex(of: "\n") else { return [] }
    return text[..<end].split(separator: "\n")
  }

  /// How many times longer than asked every wait lasts (`EVENTGRAPH_TEST_TIMEOUT_SCALE`,
  /// default 5): a timeout here only turns a hang into a failure, and on two loaded cores a
  /// child that needs seconds has needed minutes; a waited-for condition returns as soon as
  /// it holds, so a generous limit costs nothing when nothing hangs.
  static let timeoutScale: Double =
    ProcessInfo.processInfo.environment["EVENTGRAPH_TEST_TIMEOUT_SCALE"].flatMap(Double.init) ?? 5

  /// Waits until `condition` holds on the output, or `seconds` (times ``timeoutScale``) pass,
  /// then kills the child.
  @discardableResult
  func wait(seconds: Double, until condition: (Child) -> Bool) -> Bool {
    let deadline = Date().addingTimeInterval(seconds * Self.timeoutScale)
    while Date() < deadline {
      if condition(self) { return true }
      usleep(5_000)
    }
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    return false
  }

  /// Waits for the child to exit (killing it after `seconds`), then drains its output.
  func finish(seconds: Double) -> Int32 {
    wait(seconds: seconds) { !$0.process.isRunning }
    process.waitUntilExit()
    // Both pipes reach their end once the child and whatever it started have closed them;
    // the limit only turns a grandchild that keeps a pipe open into a failure, not a hang.
    if readers.wait(timeout: .now() + seconds * Self.timeoutScale) == .timedOut {
      Issue.record("the output of \(process.executableURL?.lastPathComponent ?? "a child") did not end")
    }
    return process.terminationStatus
  }
}

/// One event line of `eventtool log --json`.
struct LoggedEvent {
  var seq: Int
  var commit: Int
  var key: String?
  var value: String?

  /// Parses the complete lines of `log --json` output (a cut-off last line is left out).
  static func parse(_ lines: [Substring]) -> [LoggedEvent] {
    lines.compactMap { line in
      guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
        let seq = object["seq"] as? Int, let commit = object["commit"] as? Int
      else { return nil }
      return LoggedEvent(seq: seq, commit: commit, key: object["key"] as? String, value: object["value"] as? String)
    }
  }
}

@Suite("Several processes on one store: writers, followers, consumers", .serialized)
struct MultiProcessTests {
  @Test(
    "a store opened with its pages checked while another process keeps committing is never reported damaged"
  )
  func pageCheckUnderWriters() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    #expect(try ToolRunner.run("StressWriter", [path, "--count", "0"]).status == 0)
    // Four tasks committing through group commit, each every few milliseconds: the file's
    // pages are freed and reused all through each check's walk. The writer's commits are
    // bounded, so that the store stays small enough for a hundred walks of a debug build
    // however slow the machine: an unbounded writer on a loaded machine grew the store
    // faster than the walks went, each walk slower than the last (seven minutes once). Its
    // end is no verdict (on a fast machine it ends before the checks, on a slow one after);
    // that it never failed is.
    let writer = try Child(
      "StressWriter", [path, "--count", "20000", "--per-commit", "1", "--async", "4", "--pause", "5"])
    defer { if writer.process.isRunning { kill(writer.process.processIdentifier, SIGKILL) } }
    #expect(writer.wait(seconds: 60) { $0.lines.count >= 200 }, "\(writer.errorOutput)")
    var checked = 0
    for _ in 0..<100 {
      do {
        let store = try EventStore(path: path, options: StoreOptions(readOnly: true, checkPages: true))
        #expect(try store.lastSequence() > 0)
        checked += 1
      } catch {
        Issue.record("open \(checked + 1) with the pages checked failed: \(error)")
        break
      }
    }
    let stillWriting = writer.process.isRunning
    if stillWriting { kill(writer.process.processIdentifier, SIGKILL) }
    let status = writer.finish(seconds: 10)
    if !stillWriting { #expect(status == 0, "the writer failed: \(writer.errorOutput)") }
    #expect(checked == 100)
    #expect(try ToolRunner.eventtool(["verify", path]).status == 0)
  }

  @Test("two processes write one store while a third follows it: the follower sees every commit once, in order")
  func twoWritersOneFollower() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    #expect(try ToolRunner.run("StressWriter", [path, "--count", "0"]).status == 0)
    let perWriter = 150
    let follower = try Child("eventtool", ["log", path, "--follow", "--json", "--commits", "\(2 * perWriter)"])
    // One writer through the async API (group commit), one through the synchronous one.
    let a = try Child(
      "StressWriter", [path, "--count", "\(perWriter)", "--per-commit", "3", "--author", "A", "--async", "8"])
    let b = try Child("StressWriter", [path, "--count", "\(perWriter)", "--per-commit", "3", "--author", "B"])
    #expect(a.finish(seconds: 120) == 0, "\(a.errorOutput)")
    #expect(b.finish(seconds: 120) == 0, "\(b.errorOutput)")
    #expect(follower.finish(seconds: 60) == 0, "\(follower.errorOutput)")

    let events = LoggedEvent.parse(follower.lines)
    // Every event once, in order, and every commit once, in order.
    #expect(events.map(\.seq) == Array(1...events.count))
    var commits: [Int] = []
    for e in events where commits.last != e.commit { commits.append(e.commit) }
    #expect(commits == Array(1...(2 * perWriter)))
    // Every commit the writers reported, with all its items.
    let payloads = events.filter { $0.key == "payload" }.compactMap(\.value)
    #expect(Set(payloads).count == payloads.count)
    let expected = ["A", "B"].flatMap { w in (1...perWriter).flatMap { n in (0..<3).map { "\(w)-\(n)-\($0)" } } }
    #expect(Set(payloads) == Set(expected))
    #expect(try ToolRunner.eventtool(["verify", path]).status == 0)
  }

  @Test("a consumer killed with SIGKILL mid-stream resumes from its saved position, with no gap")
  func killedConsumer() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    #expect(
      try ToolRunner.run("StressWriter", [path, "--count", "300", "--per-commit", "2", "--author", "old"]).status == 0)
    // A writer keeps committing (about 4 commits every 10 ms) while the consumer runs; the
    // consumer is killed once it has caught up with the old commits and follows live ones.
    let writer = try Child(
      "StressWriter",
      [path, "--count", "200", "--per-commit", "2", "--author", "live", "--async", "4", "--pause", "10"])
    let first = try Child("eventtool", ["log", path, "--follow", "--json", "--consumer", "audit"])
    let reached = first.wait(seconds: 60) { child in
      Set(LoggedEvent.parse(child.lines).map(\.commit)).count >= 340
    }
    #expect(reached)
    kill(first.process.processIdentifier, SIGKILL)
    _ = first.finish(seconds: 10)
    #expect(first.process.terminationReason == .uncaughtSignal)
    let printedFirst = LoggedEvent.parse(first.lines)
    #expect(writer.finish(seconds: 120) == 0, "\(writer.errorOutput)")
    // On a loaded machine (a sanitizer build) the consumer may have read everything before
    // it was killed: more commits after the kill leave it something to resume either way.
    let late = try ToolRunner.run("StressWriter", [path, "--count", "50", "--per-commit", "2", "--author", "late"])
    #expect(late.status == 0, "\(late.err)")

    let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
    let saved = try store.consumer("audit").position()
    let commits = try store.read { try $0.commits() }
    let total = commits.count
    #expect(total == 550)
    // The saved position is the end of a commit the first run printed whole.
    let savedCommit = try #require(commits.firstIndex { $0.lastSequence == saved }.map { $0 + 1 })
    let lastWhole = try #require(
      printedFirst.last.map { e in
        commits[e.commit - 1].lastSequence == UInt64(e.seq) ? e.commit : e.commit - 1
      })
    #expect(savedCommit >= 100)
    #expect(savedCommit <= lastWhole)
    try #require(savedCommit < total, "the consumer was killed before the last commit")

    let second = try Child(
      "eventtool", ["log", path, "--follow", "--json", "--consumer", "audit", "--commits", "\(total - savedCommit)"])
    #expect(second.finish(seconds: 60) == 0, "\(second.errorOutput)")
    let printedSecond = LoggedEvent.parse(second.lines)
    // It starts right after the saved position and goes to the end without a gap.
    #expect(printedSecond.first?.commit == savedCommit + 1)
    #expect(printedSecond.map(\.seq) == Array(Int(saved) + 1...Int(commits[total - 1].lastSequence)))
    let seen = Set(printedFirst.map(\.commit)).union(printedSecond.map(\.commit))
    #expect(seen == Set(1...total))
    #expect(try store.consumer("audit").position() == commits[total - 1].lastSequence)
  }

  @Test("rebuild --projection rebuilds a projection the tool knows, and names the ones it knows otherwise")
  func rebuildProjection() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    #expect(try ToolRunner.run("StressWriter", [path, "--count", "20", "--per-commit", "2"]).status == 0)
    let rebuilt = try ToolRunner.eventtool(["rebuild", path, "--projection", "entity-counts"])
    #expect(rebuilt.status == 0, "\(rebuilt.err)")
    #expect(rebuilt.out.hasPrefix("rebuilt projection entity-counts from 20 commits, 200 events"))
    let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
    let counts = try store.readProjection("entity-counts") {
      try EntityCountProjection.counts(in: $0, model: store.model)
    }
    #expect(counts == ["Group": 20, "Item": 40])

    let unknown = try ToolRunner.eventtool(["rebuild", path, "--projection", "search"])
    #expect(unknown.status == 1)
    #expect(unknown.err.contains("knows no projection 'search' (it knows: entity-counts)"))
    let misplaced = try ToolRunner.eventtool(["log", path, "--consumer", "x"])
    #expect(misplaced.status == 2)
  }

  @Test("a tool built with EventTool(projections:) rebuilds its own projections")
  func ownTool() throws {
    struct Authors: Projection {
      let name = "authors"
      func apply(_ commit: Commit, to storage: ProjectionStorage) throws {
        let author = Array((commit.metadata.author ?? "-").utf8)
        let n = try storage.get(author).map { Int(String(decoding: $0, as: UTF8.self)) ?? 0 } ?? 0
        try storage.put(author, Array(String(n + 1).utf8))
      }
    }
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    #expect(try ToolRunner.run("StressWriter", [path, "--count", "7", "--author", "ann"]).status == 0)
    final class Output: @unchecked Sendable {
      var text = ""
    }
    let out = Output()
    let tool = EventTool(projections: [Authors()])
    let status = tool.run(
      ["rebuild", path, "--projection", "authors"], io: ToolIO(out: { out.text += $0 }, err: { out.text += $0 }))
    #expect(status == 0, "\(out.text)")
    let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
    #expect(try store.readProjection("authors") { try $0.get(Array("ann".utf8)) } == Array("7".utf8))
  }
}
