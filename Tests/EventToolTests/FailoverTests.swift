import EventGraph
import Foundation
import NATSClient
import TestSupport
import Testing

@testable import EventGraphReplication

/// An `eventtool` child that runs until it is killed, its standard output in a file.
final class ToolChild {
  let process = Process()
  let output: String

  /// `eventtool ARGUMENTS`, or with `launcher`, `LAUNCHER… eventtool ARGUMENTS` (a command
  /// that runs its arguments in place of itself, as `Tools/netns-cluster exec` does).
  init(_ arguments: [String], output: String, through launcher: [String] = []) throws {
    self.output = output
    _ = FileManager.default.createFile(atPath: output, contents: nil)
    _ = FileManager.default.createFile(atPath: output + ".err", contents: nil)
    let tool = ToolRunner.productsDirectory.appendingPathComponent("eventtool")
    if let first = launcher.first {
      process.executableURL = URL(fileURLWithPath: first)
      process.arguments = Array(launcher.dropFirst()) + [tool.path] + arguments
    } else {
      process.executableURL = tool
      process.arguments = arguments
    }
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: output + ".err"))
    try process.run()
  }

  var text: String { (try? String(contentsOfFile: output, encoding: .utf8)) ?? "" }
  var errors: String { (try? String(contentsOfFile: output + ".err", encoding: .utf8)) ?? "" }

  func kill() {
    if process.isRunning { Foundation.kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
  }
}

@Suite("Automatic failover: candidates take over once the primary's lease lapses", .serialized)
final class FailoverTests {
  let cluster: NATSCluster
  let dir: String

  init() throws {
    cluster = try NATSCluster()
    dir = temporaryDirectory("failover")
  }

  deinit { removeDirectory(dir) }

  static let ttl = "1"

  /// Waits for `done`, up to `seconds`: bounds of two minutes, which only turn a hang into a
  /// failure (a loaded machine took more than the 20 s these were once).
  func wait(seconds: Double, _ done: () throws -> Bool) rethrows -> Bool { try waitUntil(seconds: seconds, done) }

  func candidate(_ name: String, stream: String) throws -> (path: String, child: ToolChild) {
    let path = dir + "/" + name
    let child = try ToolChild(
      ["replica", path] + cluster.arguments + ["--stream", stream, "--follow", "--candidate", "--lease-ttl", Self.ttl],
      output: dir + "/" + name + ".out")
    return (path, child)
  }

  /// Commits `texts` on the store at `path` (the primary, in its own process), then waits
  /// until its shipper has put them in the stream: acknowledged, as a quorum caller would
  /// be told.
  func commitAndShip(_ texts: [String], at path: String, js: JetStream) throws -> Bool {
    let store = try EventStore(path: path)
    for text in texts {
      try store.write { tx in _ = try tx.insert("AddressBook", ["firstName": .string(text), "lastName": .string("F")]) }
    }
    return try wait(seconds: 120) { try ReplicationStatus.read(store, jetStream: js)?.unshippedCommits == 0 }
  }

  @Test(
    "the primary killed with SIGKILL 20 times in a row: each time a candidate takes the lease and promotes itself, every acknowledged commit is in the final log once, and every survivor's log is a prefix of it"
  )
  func killedPrimaries() throws {
    let js = try cluster.jetStream()
    let stream = "FAILOVER"
    let model = Self.examples + "/AddressBook.v1.model.json"
    #expect(try ToolRunner.eventtool(["init", dir + "/p0", "--model", model]).status == 0)
    var primary = (
      path: dir + "/p0",
      child: try ToolChild(
        ["replicate", dir + "/p0"] + cluster.arguments + ["--stream", stream, "--follow", "--lease-ttl", Self.ttl],
        output: dir + "/p0.out")
    )
    #expect(wait(seconds: 120) { (try? ReplicationStatus.leaseHolder(jetStream: js, stream: stream)) != nil })
    var candidates = [try candidate("c1", stream: stream), try candidate("c2", stream: stream)]
    var made = 2
    var acknowledged: [String] = []
    var failovers: [Double] = []
    let rounds = 20 * stressFactor
    for round in 0..<rounds {
      let texts = (0..<3).map { "r\(round)-\($0)" }
      let shipped = try commitAndShip(texts, at: primary.path, js: js)
      #expect(shipped, "round \(round): the primary's commits reached the stream")
      guard shipped else { break }
      acknowledged += texts
      // The candidates are caught up before the kill, so that the race is theirs to win.
      let end = try #require(try js.streamInfo(stream)?.lastSequence)
      for c in candidates where !c.child.process.isRunning {
        Issue.record("round \(round): candidate \(c.path) ended: \(c.child.text) \(c.child.errors)")
      }
      _ = try wait(seconds: 120) {
        try candidates.allSatisfy { c in
          guard FileManager.default.fileExists(atPath: c.path + "/data.mdb") else { return false }
          return try Membership.position(of: EventStore(path: c.path, options: StoreOptions(readOnly: true))) >= end
        }
      }
      primary.child.kill()
      let killed = Date()
      var winner: Int?
      _ = wait(seconds: 120) {
        winner = candidates.firstIndex { $0.child.text.contains("won the lease") }
        return winner != nil
      }
      guard let w = winner else {
        Issue.record(
          "round \(round): no candidate took over: \(candidates.map { $0.child.text + $0.child.errors })")
        break
      }
      // The first commit acknowledged by the new primary ends the failover.
      let first = "r\(round)-after"
      let accepted = try commitAndShip([first], at: candidates[w].path, js: js)
      #expect(accepted, "round \(round): the new primary's first commit reached the stream")
      guard accepted else { break }
      acknowledged.append(first)
      failovers.append(Date().timeIntervalSince(killed))
      primary = candidates.remove(at: w)
      made += 1
      candidates.append(try candidate("c\(made)", stream: stream))
    }
    primary.child.kill()
    for c in candidates { c.child.kill() }
    #expect(failovers.count == rounds)

    // The checker trusts none of the stores: it reads the stream into a fresh replica.
    let checked = try Replica.create(at: dir + "/checker", jetStream: js, stream: stream)
    try checked.catchUp()
    let names = try checked.store.read { s in
      try s.objects(of: "AddressBook").compactMap { p -> String? in
        if case .string(let name)? = try s.value(p, "firstName") { return name }
        return nil
      }
    }
    let counts = Dictionary(names.map { ($0, 1) }, uniquingKeysWith: +)
    for text in acknowledged {
      #expect(counts[text] == 1, "acknowledged commit \(text) is in the final log \(counts[text] ?? 0) time(s)")
    }
    #expect(try checked.store.verify().isOK)
    let final = try records(checked.store)
    for c in candidates + [primary] where FileManager.default.fileExists(atPath: c.path + "/data.mdb") {
      let log = try records(try EventStore(path: c.path, options: StoreOptions(readOnly: true)))
      #expect(Array(final.prefix(log.count)) == log, "\(c.path)'s log is a prefix of the final log")
    }
    let sorted = failovers.sorted()
    if !sorted.isEmpty {
      print(
        "failover (kill to the first acknowledged commit, lease \(Self.ttl) s, \(sorted.count) kills): min \(sorted[0]) s, median \(sorted[sorted.count / 2]) s, max \(sorted[sorted.count - 1]) s"
      )
    }
  }

  /// Every commit record of `store`, in order.
  func records(_ store: EventStore) throws -> [[UInt8]] { try allCommitRecords(store) }

  static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Docs/examples").path
}

/// Every commit record of `store`, in order: what the failover and partition checkers
/// compare logs by.
func allCommitRecords(_ store: EventStore) throws -> [[UInt8]] {
  var all: [[UInt8]] = []
  var next: UInt64 = 1
  while case let batch = try store.commitRecords(from: next), !batch.isEmpty {
    all += batch.map(\.bytes)
    next = batch[batch.count - 1].number + 1
  }
  return all
}
