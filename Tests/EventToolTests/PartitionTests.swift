import EventGraph
import Foundation
import Testing

@testable import EventGraphReplication

/// Partitions between hosts: the primary, two candidates, an observer and the three NATS
/// nodes each a host of its own (``NetnsCluster``), the links between them cut one at a time
/// and healed, then the primary cut off from everyone.
///
/// What is checked, as the history checker checks it (JepsenTests): every commit the
/// stream acknowledged is in the final log exactly once; nothing the primary committed while
/// it was cut off and fenced reaches the log; the logs of the stores that follow are
/// prefixes of the final log. A fresh replica on the observer reads the final log: the
/// checker trusts no store's own account.
@Suite(
  "Partitions: links cut one at a time, then the primary cut off from the majority",
  .serialized, .enabled(if: NetnsCluster.available, "needs root for ip netns"),
  .enabled(
    if: ProcessInfo.processInfo.environment["EVENTGRAPH_STRESS"] != nil,
    "a long suite (about five minutes): Tools/stress runs it"))
final class PartitionTests {
  let dir = temporaryDirectory("partition")
  static let stream = "PARTITION"
  /// The lease's time to live: long enough that a cut link to one NATS node, which the
  /// client gets over by reconnecting to another, does not move it; short enough for a quick
  /// failover when the primary is cut off from every node.
  static let ttl = "5"

  deinit { removeDirectory(dir) }

  /// A store process on a host: its store's path, its host and the process.
  struct Member {
    let path: String
    let host: String
    let child: ToolChild
  }

  /// What `stats --json --nats` says of the store at `path`, asked on the observer.
  func replication(_ cluster: NetnsCluster, _ path: String) -> [String: Any]? {
    guard let r = stats(cluster, path), r.status == 0,
      let object = try? JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any]
    else { return nil }
    return object["replication"] as? [String: Any]
  }

  /// `eventtool stats PATH --json` with the cluster's options, run on the observer.
  func stats(_ cluster: NetnsCluster, _ path: String) -> ToolRunner.Result? {
    try? cluster.eventtool(on: "h4", ["stats", path, "--json"] + cluster.arguments)
  }

  /// What the observer's `stats` printed, for a failure's message.
  func probe(_ cluster: NetnsCluster, _ path: String) -> String {
    guard let r = stats(cluster, path) else { return "" }
    return "stats: \(r.status) \(r.out) \(r.err)"
  }

  /// Where the lease holder says it is (its `--advertise`), asked of the store at `path`.
  func holder(_ cluster: NetnsCluster, of path: String) -> String? {
    (replication(cluster, path)?["leaseHolder"] as? [String: Any])?["address"] as? String
  }

  /// Commits `texts` on the primary's store and waits until its shipper has put them in
  /// the stream, as the observer sees it: acknowledged.
  ///
  /// The commit is made in this process (the store takes writes from any process on the
  /// machine); the wait lasts up to `seconds`. `false` when they were not
  /// shipped in time or the store refused them.
  func commitAndShip(_ texts: [String], at path: String, _ cluster: NetnsCluster, seconds: Double = 60) -> Bool {
    do {
      let store = try EventStore(path: path)
      for text in texts {
        try store.write { tx in
          _ = try tx.insert("AddressBook", ["firstName": .string(text), "lastName": .string("P")])
        }
      }
    } catch {
      return false
    }
    return waitUntil(seconds: seconds) {
      (replication(cluster, path)?["unshippedCommits"] as? Int) == 0
    }
  }

  /// The commits of the store at `path` as records, in order.
  func records(_ path: String) throws -> [[UInt8]] {
    try records(of: try EventStore(path: path, options: StoreOptions(readOnly: true)))
  }

  func records(of store: EventStore) throws -> [[UInt8]] { try allCommitRecords(store) }

  /// Every store of the run, for the account printed at its end.
  var everyStore: [String] = []

  /// Each store's role, stream position and commit count, and where its commits first differ
  /// from the final log's: what a failure is read with.
  func account(final: [[UInt8]]) -> String {
    everyStore.map { path in
      guard let store = try? EventStore(path: path, options: StoreOptions(readOnly: true)) else {
        return "\(path): cannot be opened"
      }
      let log = (try? allCommitRecords(store)) ?? []
      let differs = log.indices.first { $0 >= final.count || log[$0] != final[$0] }.map { "commit \($0 + 1)" } ?? "none"
      let role = (try? store.replicationRole()).flatMap { $0 }.map { "\($0.kind)" } ?? "none"
      let position = (try? Membership.position(of: store)) ?? 0
      return "\(path): \(role), position \(position), \(log.count) commits, first difference \(differs)"
    }.joined(separator: "\n")
  }

  func candidate(_ name: String, on host: String, _ cluster: NetnsCluster) throws -> Member {
    let path = dir + "/" + name
    everyStore.append(path)
    let child = try cluster.child(
      on: host,
      ["replica", path] + cluster.arguments + [
        "--stream", Self.stream, "--follow", "--candidate", "--lease-ttl", Self.ttl, "--advertise", path,
      ], output: dir + "/" + name + ".out")
    return Member(path: path, host: host, child: child)
  }

  @Test(
    "each link cut in turn (primary to each NATS node, each NATS node from all, a slow primary), then the primary cut off: acknowledged commits survive once, the cut-off primary's own are refused"
  )
  func partitions() throws {
    let cluster = try NetnsCluster(hosts: 4)
    let model = FailoverTests.examples + "/AddressBook.v1.model.json"
    let first = dir + "/p"
    everyStore.append(first)
    #expect(try ToolRunner.eventtool(["init", first, "--model", model]).status == 0)
    var primary = Member(
      path: first, host: "h1",
      child: try cluster.child(
        on: "h1",
        ["replicate", first] + cluster.arguments + [
          "--stream", Self.stream, "--follow", "--lease-ttl", Self.ttl, "--advertise", first,
        ], output: dir + "/p.out"))
    defer { primary.child.kill() }
    try #require(
      waitUntil(seconds: 30) { self.holder(cluster, of: first) == first },
      "the primary holds the lease: \(primary.child.text) \(primary.child.errors) \(probe(cluster, first))")
    var candidates = [try candidate("c1", on: "h2", cluster), try candidate("c2", on: "h3", cluster)]
    defer { for c in candidates { c.child.kill() } }
    var acknowledged: [String] = []

    // 1. One link at a time: the primary keeps the lease and its commits are acknowledged
    // while the link is cut (the client moves to another node, the stream keeps its quorum).
    let cuts: [(name: String, apply: () -> Void)] = [
      ("h1 cut from n1", { cluster.network("cut", "h1", "n1") }),
      ("h1 cut from n2", { cluster.network("cut", "h1", "n2") }),
      ("h1 cut from n3", { cluster.network("cut", "h1", "n3") }),
      ("n1 isolated", { cluster.network("isolate", "n1") }),
      ("n2 isolated", { cluster.network("isolate", "n2") }),
      ("n3 isolated", { cluster.network("isolate", "n3") }),
      ("h1 delayed 300 ms", { cluster.network("delay", "h1", "300") }),
    ]
    var moved: [String] = []
    var made = candidates.count
    for (round, cut) in cuts.enumerated() {
      cut.apply()
      let texts = ["cut\(round)-a", "cut\(round)-b"]
      var shipped = commitAndShip(texts, at: primary.path, cluster)
      // A lease that lapses while the cluster elects new leaders is an outage, not a loss:
      // the candidate that took it is the primary now, and what the old one committed
      // meanwhile was never acknowledged.
      if !shipped, let holder = holder(cluster, of: primary.path), holder != primary.path,
        let next = candidates.firstIndex(where: { $0.path == holder })
      {
        moved.append(cut.name)
        primary.child.kill()
        let host = primary.host
        primary = candidates.remove(at: next)
        // A new candidate where the old primary ran, so that two are left for what follows.
        made += 1
        candidates.append(try candidate("c\(made)", on: host, cluster))
        shipped = commitAndShip(texts, at: primary.path, cluster)
      }
      #expect(shipped, "\(cut.name): the primary's commits were acknowledged during the cut")
      if shipped { acknowledged += texts }
      cluster.network("heal", "all")
    }
    // Reported, not asserted: how often a cut of one link moved the lease.
    print("partitions: the lease moved during \(moved.isEmpty ? "no cut" : moved.joined(separator: ", "))")
    #expect(!candidates.isEmpty, "a candidate is left for the failover")

    // 2. The primary cut off from every host: a caught-up candidate takes the lease, fences
    // the stream and promotes itself; what the old primary commits meanwhile is never
    // acknowledged, and once healed it finds itself fenced.
    let end = try records(primary.path).count
    let cutOff = primary.path
    #expect(
      waitUntil(seconds: 30) {
        candidates.allSatisfy { c in ((try? self.records(c.path).count) ?? 0) >= end }
      }, "the candidates caught up before the cut")
    cluster.network("isolate", primary.host)
    let isolated = ["isolated-a", "isolated-b"]
    #expect(!commitAndShip(isolated, at: primary.path, cluster, seconds: 3), "an isolated primary acknowledged")
    var winner: Int?
    _ = waitUntil(seconds: 60) {
      winner = candidates.firstIndex { $0.child.text.contains("won the lease") }
      return winner != nil
    }
    let w = try #require(winner, "no candidate took over: \(candidates.map { $0.child.text + $0.child.errors })")
    let promoted = candidates.remove(at: w)
    let after = ["after-a"]
    let accepted = commitAndShip(after, at: promoted.path, cluster)
    #expect(accepted, "the new primary's first commit was acknowledged")
    if accepted { acknowledged += after }
    cluster.network("heal", primary.host)
    let fenced = waitUntil(seconds: 60) {
      (try? EventStore(path: cutOff, options: StoreOptions(readOnly: true)).replicationRole()?.kind) == .fenced
    }
    #expect(fenced, "the old primary, healed, marked itself fenced: \(primary.child.text) \(primary.child.errors)")
    #expect(throws: StoreError.self) {
      try EventStore(path: cutOff).write { tx in _ = try tx.insert("AddressBook", ["firstName": .string("late")]) }
    }
    primary.child.kill()
    for c in candidates { c.child.kill() }
    promoted.child.kill()
    candidates.append(promoted)

    // 3. The checker: a fresh replica, on the observer, of the whole stream.
    let check = dir + "/checker"
    let checker = try cluster.eventtool(on: "h4", ["replica", check] + cluster.arguments + ["--stream", Self.stream])
    #expect(checker.status == 0, "\(checker.err)")
    let store = try EventStore(path: check, options: StoreOptions(readOnly: true))
    let names = try store.read { s in
      try s.objects(of: "AddressBook").compactMap { try s.value($0, "firstName")?.stringValue }
    }
    let counts = Dictionary(names.map { ($0, 1) }, uniquingKeysWith: +)
    for text in acknowledged {
      #expect(counts[text] == 1, "acknowledged commit \(text) is in the final log \(counts[text] ?? 0) time(s)")
    }
    for text in isolated {
      #expect(counts[text] == nil, "\(text), committed by the fenced primary, reached the log")
    }
    #expect(try store.verify().isOK)
    let final = try records(of: store)
    print("partition stores (final log \(final.count) commits):\n" + account(final: final))
    for c in candidates where FileManager.default.fileExists(atPath: c.path + "/data.mdb") {
      let log = try records(c.path)
      #expect(Array(final.prefix(log.count)) == log, "\(c.path)'s log is a prefix of the final log")
    }
    #expect(acknowledged.count == 2 * cuts.count + after.count)
  }
}
