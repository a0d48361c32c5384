import EventGraph
import Foundation
import NATSClient
import TestSupport
import Testing

@testable import EventGraphReplication

/// A history checker of the Jepsen kind.
///
/// Clients commit through `eventtool append` to
/// whichever store the stream's lease names, in quorum mode (told "ok" once the stream
/// holds the commit) and in local mode (told "ok" once the store has it), each recording
/// what it was told; a seeded nemesis kills and pauses primaries, kills candidates and
/// kills and restarts NATS nodes. The checker then reads only the final stream (into a
/// fresh replica) and the surviving stores' files, and trusts none of their claims.
///
/// `EG_JEPSEN_SECONDS` (default 15 × FACTOR) and `EG_JEPSEN_SEED` set the run;
/// `EG_JEPSEN_REPORT` is where the report goes (`Tools/jepsen` sets it).
@Suite("A history checker: clients, a nemesis, and a check that trusts only the final stream", .serialized)
final class JepsenTests {
  let cluster: NATSCluster
  let dir: String

  init() throws {
    cluster = try NATSCluster()
    dir = temporaryDirectory("jepsen")
  }

  deinit { removeDirectory(dir) }

  static let ttl = "1"
  static let stream = "JEPSEN"

  enum Outcome: String {
    /// The client was told its commit is there (quorum: in the stream; local: in the store).
    case ok
    /// The client was told it is not (a refused commit writes nothing).
    case failed
    /// The client was told nothing (it timed out, or the stream never confirmed).
    case unknown
  }

  struct Operation {
    let index: Int
    let value: String
    let quorum: Bool
    let store: String
    let started: Double
    var ended: Double = 0
    var outcome = Outcome.unknown
    /// The first event sequence of the commit, as the store reported it.
    var sequence: UInt64?
    /// Why it failed, as the client was told.
    var refusal = ""

    var line: String {
      "op \(index) \(quorum ? "quorum" : "local") \(value) -> \(outcome.rawValue) on \((store as NSString).lastPathComponent)"
        + (sequence.map { " seq \($0)" } ?? "") + String(format: " [%.3f–%.3f s]", started, ended)
        + (refusal.isEmpty ? "" : ": " + refusal)
    }
  }

  struct Fault {
    let at: Double
    let what: String
    /// The store it struck, when it struck one.
    var store: String?
    var line: String { String(format: "%.3f s nemesis: ", at) + what }
  }

  var operations: [Operation] = []
  var faults: [Fault] = []
  let began = Date()
  var now: Double { Date().timeIntervalSince(began) }

  /// The members' processes: the primary's `replicate --follow` and the candidates'.
  var members: [String: ToolChild] = [:]
  var made = 0
  /// The primary the clients last found.
  var lastHolder: String?

  func wait(seconds: Double, _ done: () throws -> Bool) rethrows -> Bool { try waitUntil(seconds: seconds, done) }

  func startCandidate() throws {
    made += 1
    try runCandidate(dir + "/m\(made)", output: dir + "/m\(made).out")
  }

  /// Starts `eventtool replica --follow --candidate` on `path` (a new store, or one it ran
  /// on before), its output in `output`.
  func runCandidate(_ path: String, output: String) throws {
    members[path] = try ToolChild(
      ["replica", path] + cluster.arguments + [
        "--stream", Self.stream, "--follow", "--candidate", "--lease-ttl", Self.ttl, "--advertise", path,
      ],
      output: output)
  }

  /// Whether the stream holds every commit of the store at `path`, as its status says.
  func shipped(_ js: JetStream, _ path: String) -> Bool {
    let s = try? EventStore(path: path, options: StoreOptions(readOnly: true))
    return s.flatMap { try? ReplicationStatus.read($0, jetStream: js)?.unshippedCommits } == 0
  }

  func holder(_ js: JetStream) -> String? {
    (try? ReplicationStatus.leaseHolder(jetStream: js, stream: Self.stream))?.flatMap(\.address)
  }

  /// One client operation on the store the lease names (or on `store`).
  func operate(_ js: JetStream, quorum: Bool, on store: String? = nil) throws {
    var target = store
    if target == nil {
      _ = wait(seconds: 15) {
        target = holder(js); return target != nil
      }
    }
    guard let target else {
      faults.append(Fault(at: now, what: "no primary named by the lease for 15 s; operation not made"))
      return
    }
    // A primary the lease left (for whatever reason: a fault of NATS too) was failed over:
    // what it acknowledged locally and had not shipped may be lost (Docs/replication.md).
    if store == nil, let last = lastHolder, last != target {
      faults.append(Fault(at: now, what: "clients find the lease moved from \(last) to \(target)", store: last))
    }
    if store == nil { lastHolder = target }
    let index = operations.count
    var op = Operation(index: index, value: "v\(index)", quorum: quorum, store: target, started: now)
    let input = dir + "/op\(index).jsonl"
    try [
      #"{"commit": "c", "type": "insert", "object": "$p", "entity": "AddressBook"}"#,
      #"{"commit": "c", "type": "set", "object": "$p", "key": "firstName", "value": "\#(op.value)"}"#,
      #"{"commit": "c", "type": "set", "object": "$p", "key": "lastName", "value": "\#(quorum ? "q" : "l")"}"#,
    ].joined(separator: "\n").appending("\n").write(toFile: input, atomically: true, encoding: .utf8)
    let client = try ToolChild(["append", target, input, "--json"], output: dir + "/op\(index).out")
    if !wait(seconds: 10, { !client.process.isRunning }) {
      client.kill()
    } else if client.process.terminationStatus != 0 {
      op.outcome = .failed
      op.refusal = client.errors.trimmingCharacters(in: .whitespacesAndNewlines)
    } else {
      let fields = client.text.split(whereSeparator: { ",{} ".contains($0) })
      op.sequence = fields.firstIndex(of: #""seq":"#).flatMap { UInt64(fields[fields.index(after: $0)]) }
      if !quorum {
        op.outcome = .ok
      } else if wait(seconds: 10, { shipped(js, target) }) {
        op.outcome = .ok
      }
    }
    op.ended = now
    operations.append(op)
  }

  @Test(
    "a seeded run of clients and nemesis: the final stream holds every acknowledged quorum commit once, positions have one writer, every survivor is a prefix, local losses only where a primary was struck"
  )
  func history() throws {
    let env = ProcessInfo.processInfo.environment
    let seconds = env["EG_JEPSEN_SECONDS"].flatMap(Double.init) ?? 15 * Double(stressFactor)
    let seed = env["EG_JEPSEN_SEED"].flatMap(UInt64.init) ?? 2_026_12_07
    var g = SeededGenerator(seed: seed)
    let js = try cluster.jetStream()
    let first = dir + "/m0"
    #expect(
      try ToolRunner.eventtool(["init", first, "--model", FailoverTests.examples + "/AddressBook.v1.model.json"]).status
        == 0)
    members[first] = try ToolChild(
      ["replicate", first] + cluster.arguments + [
        "--stream", Self.stream, "--follow", "--lease-ttl", Self.ttl, "--advertise", first,
      ],
      output: first + ".out")
    #expect(wait(seconds: 20) { holder(js) == first }, "the first primary holds the lease")
    try startCandidate()
    try startCandidate()
    var downNode: Int?
    while now < seconds {
      for _ in 0..<g.int(3...6) { try operate(js, quorum: g.next() % 2 == 0) }
      guard let primary = holder(js) else { continue }
      switch g.int(0...3) {
      case 0, 1:
        // The primary killed, or paused past its lease and then resumed.
        let pause = g.next() % 2 == 0
        guard let child = members[primary] else { continue }
        if pause {
          Foundation.kill(child.process.processIdentifier, SIGSTOP)
        } else {
          child.kill()
        }
        faults.append(Fault(at: now, what: "\(pause ? "paused" : "killed") the primary \(primary)", store: primary))
        // A client that still believes in it, while its lease has not lapsed.
        try operate(js, quorum: g.next() % 2 == 0, on: primary)
        let moved = wait(seconds: 30) { holder(js).map { $0 != primary } ?? false }
        faults.append(
          Fault(
            at: now,
            what: moved
              ? "the lease moved to \(holder(js) ?? "?")"
              : "the lease did not move in 30 s; the members said: "
                + members.sorted(by: { $0.key < $1.key }).map { path, child in
                  "\((path as NSString).lastPathComponent): "
                    + (child.text + child.errors).split(separator: "\n").suffix(3).joined(separator: " / ")
                }.joined(separator: "; ")))
        #expect(moved, "a candidate took over from \(primary)")
        if pause {
          Foundation.kill(child.process.processIdentifier, SIGCONT)
          let ended = wait(seconds: 20) { !child.process.isRunning }
          if !ended { child.kill() }
          faults.append(
            Fault(
              at: now,
              what: "resumed \(primary): "
                + (ended ? "it stopped by itself, exit \(child.process.terminationStatus)" : "it kept running, killed"))
          )
        }
        members[primary] = nil
        try startCandidate()
      case 2:
        // A candidate killed and started again where it was.
        guard let path = members.keys.filter({ $0 != primary }).sorted().first, let child = members[path] else {
          continue
        }
        child.kill()
        try runCandidate(path, output: path + ".out.\(made)")
        made += 1
        faults.append(Fault(at: now, what: "killed and restarted the candidate \(path)", store: path))
      default:
        // A NATS node killed, or the one that was down started again.
        if let n = downNode {
          cluster.restart(node: n)
          downNode = nil
          faults.append(Fault(at: now, what: "restarted NATS node \(n)"))
        } else {
          let n = g.int(1...3)
          cluster.kill(node: n)
          downNode = n
          faults.append(Fault(at: now, what: "killed NATS node \(n)"))
        }
      }
    }
    if let n = downNode {
      cluster.restart(node: n)
      faults.append(Fault(at: now, what: "restarted NATS node \(n)"))
    }
    // Quiet: the primary ships what it holds before everything stops.
    if let primary = holder(js) {
      _ = wait(seconds: 20) { shipped(js, primary) }
    }
    for child in members.values { child.kill() }
    let problems = try check(js, operations)
    report(seed: seed, seconds: seconds, problems: problems, to: env["EG_JEPSEN_REPORT"])
    #expect(problems.isEmpty, "\(problems.map(\.what).joined(separator: "\n"))")
    // The checker can tell: a quorum acknowledgement of a commit never made, a local one
    // from a store no fault struck, are found.
    var forged = operations
    let n = forged.count
    forged.append(Operation(index: n, value: "v\(n)", quorum: true, store: first, started: now, outcome: .ok))
    forged.append(
      Operation(index: n + 1, value: "v\(n + 1)", quorum: false, store: dir + "/none", started: now, outcome: .ok))
    let found = try check(js, forged).compactMap(\.operation)
    #expect(found.contains(n) && found.contains(n + 1), "the checker finds forged acknowledgements: \(found)")
    #expect(operations.contains { $0.quorum && $0.outcome == .ok }, "some quorum commits were acknowledged")
    #expect(faults.count > 0, "the nemesis struck")
  }

  struct Problem {
    let what: String
    /// The operation it concerns, for the narrowed history.
    let operation: Int?
  }

  /// The commits of a store's log: each one's record and the values it inserted.
  func log(_ store: EventStore) throws -> [(record: [UInt8], values: [String], firstSequence: UInt64)] {
    let commits = try store.read { try $0.commits() }
    var records: [[UInt8]] = []
    var next: UInt64 = 1
    while case let batch = try store.commitRecords(from: next), !batch.isEmpty {
      records += batch.map(\.bytes)
      next = batch[batch.count - 1].number + 1
    }
    return zip(commits, records).map { commit, record in
      let values = commit.events.compactMap { event -> String? in
        if case .set(_, _, .string(let v)?) = event, v.hasPrefix("v") { return v }
        return nil
      }
      return (record, values, commit.firstSequence)
    }
  }

  /// The checks, from the final stream and the stores' files only.
  func check(_ js: JetStream, _ operations: [Operation]) throws -> [Problem] {
    var problems: [Problem] = []
    let checker = try Replica.create(at: dir + "/checker-\(operations.count)", jetStream: js, stream: Self.stream)
    try checker.catchUp()
    if !(try checker.store.verify().isOK) {
      problems.append(Problem(what: "the final log does not verify", operation: nil))
    }
    let final = try log(checker.store)
    var where_: [String: [Int]] = [:]
    for (i, c) in final.enumerated() { for v in c.values { where_[v, default: []].append(i) } }
    for (v, places) in where_ where places.count > 1 {
      problems.append(Problem(what: "\(v) is in the final log \(places.count) times", operation: Int(v.dropFirst())))
    }
    let struck = Set(faults.compactMap(\.store))
    var logs: [String: [(record: [UInt8], values: [String], firstSequence: UInt64)]] = [:]
    for path in Set(operations.map(\.store)).union(members.keys)
    where FileManager.default.fileExists(atPath: path + "/data.mdb") {
      logs[path] = try log(try EventStore(path: path, options: StoreOptions(readOnly: true)))
    }
    for op in operations where op.outcome == .ok {
      let places = where_[op.value] ?? []
      if op.quorum && places.count != 1 {
        problems.append(
          Problem(
            what: "\(op.line): acknowledged by quorum, in the final log \(places.count) time(s)", operation: op.index))
      }
      if !op.quorum && places.isEmpty && !struck.contains(op.store) {
        problems.append(
          Problem(
            what: "\(op.line): acknowledged locally by a primary no fault struck, not in the final log",
            operation: op.index))
      }
      // One writer a position: the record the acknowledging store holds is the final one.
      if op.quorum, let i = places.first, let own = logs[op.store]?.first(where: { $0.values.contains(op.value) }),
        own.record != final[i].record
      {
        problems.append(
          Problem(
            what: "\(op.line): the acknowledging store's record differs from the final log's at commit \(i + 1)",
            operation: op.index))
      }
    }
    // Every survivor's log is a prefix of the final one; a struck primary may hold more,
    // but only commits no client was told were in the stream.
    let quorumOK = Set(operations.filter { $0.quorum && $0.outcome == .ok }.map(\.value))
    for (path, own) in logs.sorted(by: { $0.key < $1.key }) {
      let common = zip(own, final).prefix { $0.record == $1.record }.count
      guard common < own.count else { continue }
      let extra = own[common...].flatMap(\.values)
      if !struck.contains(path) {
        problems.append(
          Problem(
            what: "\(path)'s log leaves the final log at commit \(common + 1) and no fault struck it", operation: nil))
      }
      for v in extra where quorumOK.contains(v) {
        problems.append(
          Problem(
            what: "\(path) holds \(v), acknowledged by quorum, beyond where its log leaves the final log",
            operation: Int(v.dropFirst())))
      }
    }
    return problems
  }

  /// The report: the whole history, the problems, and for each problem the history narrowed
  /// to it (its operation, the faults from its start on, and the operations on its store).
  func report(seed: UInt64, seconds: Double, problems: [Problem], to path: String?) {
    let acknowledged = operations.filter { $0.outcome == .ok }
    var text = """
      jepsen run: seed \(seed), \(Int(seconds)) s, lease \(Self.ttl) s
      \(operations.count) operations (\(acknowledged.filter(\.quorum).count) quorum ok, \
      \(acknowledged.filter { !$0.quorum }.count) local ok, \
      \(operations.filter { $0.outcome == .failed }.count) failed, \
      \(operations.filter { $0.outcome == .unknown }.count) unknown), \(faults.count) nemesis events
      \(problems.isEmpty ? "ok: no problem found" : "\(problems.count) problem(s)")

      """
    for p in problems {
      text += "problem: \(p.what)\n"
      guard let i = p.operation, i < operations.count else { continue }
      let op = operations[i]
      text += "  narrowed history:\n"
      let lines =
        faults.filter { $0.at >= op.started }.map { ($0.at, $0.line) }
        + operations.filter { $0.store == op.store && $0.started >= op.started }.map { ($0.started, $0.line) }
      for (_, line) in lines.sorted(by: { $0.0 < $1.0 }) { text += "    \(line)\n" }
    }
    text += "\nhistory:\n"
    let all = operations.map { ($0.started, $0.line) } + faults.map { ($0.at, $0.line) }
    for (_, line) in all.sorted(by: { $0.0 < $1.0 }) { text += "  \(line)\n" }
    if let path { try? text.write(toFile: path, atomically: true, encoding: .utf8) }
    print(text.split(separator: "\n").prefix(4).joined(separator: "\n"))
  }
}
