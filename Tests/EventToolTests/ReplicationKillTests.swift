import EventGraph
import EventGraphReplication
import Foundation
import NATSClient
import TestSupport
import Testing

/// A StressWriter child in quorum mode, and the commits it reported acknowledged.
struct QuorumWriter {
  let process = Process()
  let out = Pipe()
  let err = Pipe()
  private(set) var buffer = Data()

  init(store: String, cluster: NATSCluster, stream: String, author: String, extra: [String] = []) throws {
    process.executableURL = ToolRunner.productsDirectory.appendingPathComponent("StressWriter")
    process.arguments =
      [store] + cluster.arguments + ["--stream", stream, "--per-commit", "3", "--author", author] + extra
    process.standardOutput = out
    process.standardError = err
    try process.run()
  }

  /// Reads until `count` commits were reported, or the child ended.
  mutating func waitFor(_ count: Int) {
    while acknowledged.count < count {
      let chunk = out.fileHandleForReading.availableData
      if chunk.isEmpty { return }
      buffer.append(chunk)
    }
  }

  /// Reads what is left after the child ended.
  mutating func drain() { buffer.append(out.fileHandleForReading.readDataToEndOfFile()) }

  /// The batches reported done (acknowledged by the stream).
  var acknowledged: [Int] {
    String(decoding: buffer, as: UTF8.self).split(separator: "\n").compactMap {
      $0.hasPrefix("done ") ? Int($0.dropFirst(5)) : nil
    }
  }
}

@Suite("Replication under kills: primaries, stream leaders, replicas", .serialized)
final class ReplicationKillTests {
  let cluster: NATSCluster
  let dir: String

  init() throws {
    cluster = try NATSCluster()
    dir = temporaryDirectory("replicationkills")
  }

  deinit { removeDirectory(dir) }

  /// Each commit's author and batch, as a replica holds them (the payload of item 0).
  func commits(in store: EventStore) throws -> [String] {
    try store.read { s in
      try s.objects(of: "Item").compactMap { item -> String? in
        guard let payload = try s.value(item, "payload")?.stringValue, payload.hasSuffix("-0") else { return nil }
        return String(payload.dropLast(2))
      }
    }
  }

  /// The replica at `path` of `stream`, made or opened, caught up with the stream.
  ///
  /// A transient failure (no stream leader yet after a node was killed and restarted, a
  /// timeout on a loaded machine) is tried again for up to 60 s, as a candidate does: the
  /// verdict is about what the stream holds, not how fast the cluster elects a leader.
  func catchUp(_ path: String, stream: String) throws -> Replica {
    let end = Date().addingTimeInterval(60)
    while true {
      do {
        let js = try cluster.jetStream()
        let replica =
          FileManager.default.fileExists(atPath: path + "/data.mdb")
          ? try Replica(store: try EventStore(path: path), jetStream: js, stream: stream)
          : try Replica.create(at: path, jetStream: js, stream: stream)
        try replica.catchUp()
        return replica
      } catch let e as NATSError where e.isTransient && Date() < end {
        Thread.sleep(forTimeInterval: 0.5)
      }
    }
  }

  @Test("a quorum primary killed with SIGKILL 50 times: every acknowledged commit is on the replica once, in order")
  func primaryKilled() throws {
    let path = dir + "/primary"
    var g = SeededGenerator(seed: 0xF00D)
    var acknowledged: [String] = []
    for round in 0..<(50 * stressFactor) {
      var writer = try QuorumWriter(
        store: path, cluster: cluster, stream: "KILLED", author: "r\(round)", extra: ["--async", "4"])
      writer.waitFor(1 + Int(g.next() % 8))
      kill(writer.process.processIdentifier, SIGKILL)
      writer.process.waitUntilExit()
      writer.drain()
      acknowledged += writer.acknowledged.map { "r\(round)-\($0)" }
    }
    #expect(acknowledged.count >= 50)
    let replica = try catchUp(dir + "/replica", stream: "KILLED")
    let held = try commits(in: replica.store)
    #expect(Set(held).count == held.count)
    #expect(Set(acknowledged).isSubset(of: Set(held)))
    #expect(try replica.store.verify().isOK)
    let primary = try EventStore(path: path)
    #expect(try primary.verify().isOK)
    // The replica's log is a prefix of the primary's (commits never acknowledged may be
    // missing from the stream, never the other way round).
    let ours = try replica.store.commitRecords(from: 1, maxCommits: .max, maxBytes: .max).map(\.bytes)
    let theirs = try primary.commitRecords(from: 1, maxCommits: .max, maxBytes: .max).map(\.bytes)
    #expect(Array(theirs.prefix(ours.count)) == ours)
  }

  @Test("the stream's leader killed during quorum commits: they stall, then every one lands once")
  func leaderKilled() throws {
    let path = dir + "/leader"
    var writer = try QuorumWriter(
      store: path, cluster: cluster, stream: "LEADER", author: "w", extra: ["--async", "8", "--count", "200"])
    writer.waitFor(40)
    var leader = "n1"
    _ = waitUntil(seconds: 30) {
      guard let found = try? cluster.jetStream().streamInfo("LEADER")?.leader else { return false }
      leader = found
      return true
    }
    let node = Int(leader.dropFirst()) ?? 1
    cluster.kill(node: node)
    writer.drain()
    writer.process.waitUntilExit()
    cluster.restart(node: node)
    #expect(writer.process.terminationStatus == 0)
    #expect(Set(writer.acknowledged) == Set(1...200))
    let replica = try catchUp(dir + "/leader-replica", stream: "LEADER")
    let held = try commits(in: replica.store)
    #expect(held.count == 200)
    #expect(Set(held) == Set((1...200).map { "w-\($0)" }))
  }

  @Test("a replica killed while it applies resumes exactly: its log equals the primary's")
  func replicaKilled() throws {
    let path = dir + "/shipped"
    // One message per commit: a quorum writer alone ships each as it lands.
    var writer = try QuorumWriter(
      store: path, cluster: cluster, stream: "RKILL", author: "s", extra: ["--count", "300"])
    writer.drain()
    writer.process.waitUntilExit()
    #expect(writer.acknowledged.count == 300)
    var g = SeededGenerator(seed: 0xBEEF)
    for _ in 0..<10 {
      let p = Process()
      p.executableURL = ToolRunner.productsDirectory.appendingPathComponent("eventtool")
      p.arguments = ["replica", dir + "/killed-replica"] + cluster.arguments + ["--stream", "RKILL"]
      p.standardOutput = FileHandle.nullDevice
      p.standardError = FileHandle.nullDevice
      try p.run()
      Thread.sleep(forTimeInterval: Double(50 + g.next() % 250) / 1000)
      if p.isRunning { kill(p.processIdentifier, SIGKILL) }
      p.waitUntilExit()
    }
    let replica = try catchUp(dir + "/killed-replica", stream: "RKILL")
    let primary = try EventStore(path: path, options: StoreOptions(readOnly: true))
    let ours = try replica.store.commitRecords(from: 1, maxCommits: .max, maxBytes: .max).map(\.bytes)
    let theirs = try primary.commitRecords(from: 1, maxCommits: .max, maxBytes: .max).map(\.bytes)
    #expect(ours == theirs)
    #expect(try replica.store.verify().isOK)
  }

  @Test("a primary paused with SIGSTOP across a promotion is fenced when it resumes, and never acknowledges after")
  func pausedPrimary() throws {
    let path = dir + "/paused"
    var writer = try QuorumWriter(
      store: path, cluster: cluster, stream: "PAUSED", author: "p", extra: ["--pause", "5"])
    writer.waitFor(20)
    kill(writer.process.processIdentifier, SIGSTOP)
    Thread.sleep(forTimeInterval: 0.2)
    let before = Set(writer.acknowledged)
    let replica = try catchUp(dir + "/promoted", stream: "PAUSED")
    try replica.promote()
    let inStream = Set(try commits(in: replica.store))
    kill(writer.process.processIdentifier, SIGCONT)
    writer.drain()
    writer.process.waitUntilExit()
    // It stopped by itself, saying why.
    #expect(writer.process.terminationStatus == 1)
    let err = String(decoding: writer.err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    #expect(err.contains("fenced"))
    // Every commit it acknowledged, before or after the pause, is in the stream.
    #expect(Set(writer.acknowledged.map { "p-\($0)" }).isSubset(of: inStream))
    #expect(before.count >= 20)
    let old = try EventStore(path: path)
    #expect(try old.replicationRole()?.kind == .fenced)
  }
}
