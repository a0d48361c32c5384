import EventGraph
import EventGraphLocking
import Foundation
import NATSClient

// A child process for crash and multi-process tests: appends commits to a store until
// killed, printing "done N" after commit N has returned (so it is durable). Each commit
// inserts `perCommit` Item objects whose `batch` attribute is N and links them in order to
// a new Group, so a partial commit would be visible as a group with fewer items.
//
// With `--async T`, T tasks commit concurrently through the async API (group commit),
// taking batch numbers in turn; "done N" still follows the return of commit N.
//
// `--pause MS` sleeps after each commit (a steady live stream for followers).
//
// `--checkpoint` writes, with each commit, the checkpoint "stress" holding the number of
// groups the commit leaves (decimal): a crash must leave both or neither.
//
// `--switch-versions` makes each step a commit at the active version followed by a switch to
// the other of versions 1 and 2 (installed on first use), reopening the store after it.
//
// `--nats URLS --stream NAME` ships the store to that stream in quorum mode (over TLS with
// `--nats-tls-ca FILE`, as `--nats-user NAME` with `--nats-password-file FILE`): commits go
// through the async API (one task unless `--async T`), and "done N" follows the stream's
// acknowledgement of commit N.
//
// `--group NAME --member M --journal FILE [--lease S]` runs a member of consumer group NAME
// instead, until killed: for each commit it handles it appends a line to FILE — the
// monotonic clock when it began and when it ended (nanoseconds), the commit's first
// sequence and the objects its events name — before it returns (Tests/ConsumerGroupKillTests).
//
// Usage: StressWriter STORE [--per-commit K] [--count N] [--author NAME] [--async T] [--pause MS]
//        [--checkpoint] [--switch-versions] [--nats URLS --stream NAME]
//        StressWriter STORE --group NAME --member M --journal FILE [--lease S]
struct Settings: Sendable {
  var path: String
  var perCommit: Int
  var count: Int
  var author: String
  var tasks: Int
  var pause: Double
  var checkpoint: Bool
  var switchVersions: Bool
  var nats: [String]
  var stream: String?
  var security = NATSSecurity()

  init?(_ args: [String]) {
    guard let path = args.first else { return nil }
    func option(_ name: String) -> String? {
      guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
      return args[i + 1]
    }
    self.path = path
    perCommit = Int(option("--per-commit") ?? "") ?? 10
    count = Int(option("--count") ?? "") ?? Int.max
    author = option("--author") ?? "stress"
    tasks = Int(option("--async") ?? "") ?? 0
    pause = (Double(option("--pause") ?? "") ?? 0) / 1000
    checkpoint = args.contains("--checkpoint")
    switchVersions = args.contains("--switch-versions")
    nats = option("--nats")?.split(separator: ",").map(String.init) ?? []
    stream = option("--stream")
    security.caFile = option("--nats-tls-ca")
    security.user = option("--nats-user")
    security.password = option("--nats-password-file").flatMap { try? String(contentsOfFile: $0, encoding: .utf8) }?
      .trimmingCharacters(in: .whitespacesAndNewlines)
    // Quorum acknowledgement is the service's: commits go through it.
    if !nats.isEmpty { tasks = max(tasks, 1) }
  }
}

enum StressWriter {
  static func open(_ path: String) throws -> EventStore {
    if FileManager.default.fileExists(atPath: path + "/data.mdb") { return try EventStore(path: path) }
    return try EventStore.create(at: path, model: model(version: 1))
  }

  /// The stress model, at `version` (the same entities in every version).
  static func model(version: Int) throws -> Model {
    try Model(
      name: "Stress", version: version,
      entities: [
        EntityDescription(
          name: "Group", attributes: [AttributeDescription(name: "batch", type: .int64)],
          relationships: [
            RelationshipDescription(
              name: "items", destination: "Item", isToMany: true, isOrdered: true, inverse: "group",
              deleteRule: .cascade)
          ]),
        EntityDescription(
          name: "Item",
          attributes: [
            AttributeDescription(name: "batch", type: .int64), AttributeDescription(name: "payload", type: .string),
          ],
          relationships: [RelationshipDescription(name: "group", destination: "Group", inverse: "items")]),
      ])
  }

  /// One commit: a group of `perCommit` items, all with batch number `batch`.
  static func fill(_ tx: Transaction, batch: Int, _ s: Settings) throws {
    let g = try tx.insert("Group", ["batch": .int64(Int64(batch))])
    for i in 0..<s.perCommit {
      let item = try tx.insert(
        "Item", ["batch": .int64(Int64(batch)), "payload": .string("\(s.author)-\(batch)-\(i)")])
      try tx.link(g, "items", item)
    }
    if s.checkpoint {
      let groups = try tx.objects(of: "Group").count
      try tx.setCheckpoint(Checkpoint(name: "stress", value: Array(String(groups).utf8)))
    }
  }

  /// Commits and switches versions back and forth, reopening the store for each step.
  static func switchVersions(_ s: Settings) throws {
    var n = 0
    while n < s.count {
      n += 1
      try switchStep(batch: n, s)
      report(n)
    }
  }

  /// A commit at the active version, then a switch to the other; the store closes on return
  /// (one handle per process), so the next step opens it at its new version.
  private static func switchStep(batch: Int, _ s: Settings) throws {
    let store = try open(s.path)
    let other = store.model.version == 1 ? 2 : 1
    if try !store.versions().contains(other) { try store.installVersion(try model(version: other)) }
    try store.write { tx in try fill(tx, batch: batch, s) }
    try store.switchVersion(to: other)
  }

  /// Unbuffered, so the parent sees each line as soon as the commit has returned.
  static func report(_ batch: Int) { FileHandle.standardOutput.write(Data("done \(batch)\n".utf8)) }

  static func run(_ s: Settings) async throws {
    if s.switchVersions { return try switchVersions(s) }
    let store = try open(s.path)
    let metadata = CommitMetadata(author: s.author)
    let shipper =
      try s.nats.isEmpty ? nil : QuorumShipping.start(store, urls: s.nats, stream: s.stream, security: s.security)
    defer { shipper?.stop() }
    guard s.tasks > 0 else {
      var n = 0
      while n < s.count {
        n += 1
        let batch = n
        try store.write(metadata: metadata) { tx in try fill(tx, batch: batch, s) }
        report(batch)
        if s.pause > 0 { usleep(UInt32(s.pause * 1_000_000)) }
      }
      return
    }
    let next = Counter()
    try await withThrowingTaskGroup(of: Void.self) { group in
      for _ in 0..<s.tasks {
        group.addTask {
          while let batch = next.take(below: s.count) {
            try await store.commit(metadata: metadata) { tx in try fill(tx, batch: batch, s) }
            report(batch)
            if s.pause > 0 { try await Task.sleep(for: .seconds(s.pause)) }
          }
        }
      }
      try await group.waitForAll()
    }
  }
}

/// A consumer group member that journals what it handles (see the usage above).
enum GroupMember {
  static func run(_ path: String, group: String, _ args: [String]) async throws {
    func option(_ name: String) -> String? {
      guard let i = args.firstIndex(of: name), i + 1 < args.count else { return nil }
      return args[i + 1]
    }
    guard let member = option("--member"), let journal = option("--journal") else {
      throw MemberError(message: "--group needs --member and --journal")
    }
    let store = try EventStore(path: path)
    _ = FileManager.default.createFile(atPath: journal, contents: nil)
    guard let out = FileHandle(forWritingAtPath: journal) else { throw MemberError(message: "cannot write \(journal)") }
    out.seekToEndOfFile()
    let options = GroupOptions(lease: Double(option("--lease") ?? "") ?? 1, partitions: 8)
    let g = try store.consumerGroup(group, member: member, options: options)
    try await g.run { c in
      let began = now()
      let objects = Set(c.events.map(\.object.rawValue)).sorted().map(String.init).joined(separator: ",")
      let line = "\(began) \(now()) \(c.firstSequence) \(objects)\n"
      out.write(Data(line.utf8))
    }
  }

  struct MemberError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
  }

  /// The monotonic clock, in nanoseconds: every process on the machine reads the same one.
  static func now() -> UInt64 {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return UInt64(t.tv_sec) * 1_000_000_000 + UInt64(t.tv_nsec)
  }
}

/// Hands out 1, 2, 3, … to concurrent tasks.
final class Counter: Sendable {
  private let last = Locked(0)
  func take(below limit: Int) -> Int? {
    last.withLock { n in
      guard n < limit else { return nil }
      n += 1
      return n
    }
  }
}

guard let settings = Settings(Array(CommandLine.arguments.dropFirst())) else {
  FileHandle.standardError.write(Data("usage: StressWriter STORE [--per-commit K] [--count N] [--async T]\n".utf8))
  exit(2)
}
do {
  let args = Array(CommandLine.arguments.dropFirst())
  if let i = args.firstIndex(of: "--group"), i + 1 < args.count {
    try await GroupMember.run(settings.path, group: args[i + 1], args)
  } else {
    try await StressWriter.run(settings)
  }
} catch {
  FileHandle.standardError.write(Data("StressWriter: \(error)\n".utf8))
  exit(1)
}
