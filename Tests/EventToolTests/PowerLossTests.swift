import Foundation
import TestSupport
import Testing

@testable import EventGraph

/// Power loss on one machine: a writing command's writes and syncs to a store's files are
/// recorded by the fault shim (`EG_RECORD`), and every state a power cut could leave is
/// rebuilt from them — everything synced, plus any prefix or subset of what was written
/// after the last sync (the model ALICE and CrashMonkey use) — then opened and verified.
@Suite("Power loss: every state a cut can leave opens, verifies, and holds every commit acknowledged before it")
struct PowerLossTests {
  struct Command: Sendable, CustomStringConvertible {
    let name: String
    /// Whether the store has personal attributes, its key-encryption key in DIR/k.key.
    var keyed = false
    /// What the command had promised once it printed `printed`, checked against a crash
    /// state opened as a store (`before`: the store's statistics before the command): a
    /// failure, or nil.
    let promised: @Sendable (_ printed: String, _ state: EventStore, _ before: StoreStatistics) throws -> String?
    /// For a command that writes a copy of the store (DIR/b): what it had promised of the
    /// copy in a crash state (the state's directory).
    var copy: (@Sendable (_ printed: String, _ state: String, _ before: StoreStatistics) throws -> String?)? = nil
    let setup: @Sendable (String) throws -> [String]
    var description: String { name }

    /// The store's log is as it was (a command that rewrites the file, not the log).
    static func unchanged(_ state: EventStore, _ before: StoreStatistics) throws -> String? {
      let stats = try state.statistics()
      return stats.commits == before.commits && stats.events == before.events
        ? nil
        : "the log holds \(stats.commits) commit(s), \(stats.events) event(s), not \(before.commits), \(before.events)"
    }

    /// Every commit printed as acknowledged is in the log.
    static func commits(_ acknowledged: Int, _ state: EventStore, _ before: StoreStatistics) throws -> String? {
      let commits = try state.statistics().commits
      return commits >= before.commits + UInt64(acknowledged)
        ? nil : "\(acknowledged) commit(s) acknowledged, \(commits - before.commits) in the log"
    }

    /// The lines of `append --json` that acknowledge a commit.
    static func acknowledgements(_ printed: String) -> [Substring] {
      printed.split(separator: "\n").filter { $0.hasPrefix(#"{"commit""#) }
    }
  }

  static let commands: [Command] = [
    Command(
      name: "append",
      promised: { printed, state, before in
        try Command.commits(Command.acknowledgements(printed).count, state, before)
      }
    ) { dir in try DiskFaultTests.appendSetup(dir, commits: 6) },
    Command(
      name: "import",
      promised: { printed, state, before in
        // "imported 30 objects in 3 commit(s) (…)" once the whole import is committed.
        guard let range = printed.range(of: #"in (\d+) commit"#, options: .regularExpression) else { return nil }
        return try Command.commits(Int(printed[range].split(separator: " ")[1]) ?? 0, state, before)
      }
    ) { dir in
      try DiskFaultTests.populated(dir + "/source", people: 30)
      try DiskFaultTests.content(dir + "/source").write(toFile: dir + "/p.jsonl", atomically: true, encoding: .utf8)
      _ = try EventStore.create(at: dir + "/s", model: try DiskFaultTests.model())
      return ["import", dir + "/s", dir + "/p.jsonl", "--batch", "10"]
    },
    Command(
      name: "upcast",
      promised: { printed, state, before in
        // Before "upcast v1 -> v2" the store may be at either version (verify checks it is
        // whole); after it, at version 2 with every commit of version 1 upcast.
        guard printed.contains("upcast v1 -> v2") else { return nil }
        let stats = try state.statistics()
        return stats.modelVersion == 2 && stats.commits == before.commits
          ? nil
          : "the upcast was acknowledged, the store is at version \(stats.modelVersion) with \(stats.commits) commit(s)"
      }
    ) { dir in
      try DiskFaultTests.populated(dir + "/s", people: 12)
      return [
        "upcast", dir + "/s", "--model", DiskFaultTests.examples + "/AddressBook.v2.model.json", "--mapping",
        DiskFaultTests.examples + "/AddressBook.v1-v2.mapping.json", "--batch", "4",
      ]
    },
    // A copy of the store's pages in use, written inside the store's directory, synced,
    // and renamed over data.mdb: every state holds the old file or the new one, whole.
    Command(
      name: "compact",
      promised: { printed, state, before in
        if let changed = try Command.unchanged(state, before) { return changed }
        // Once it printed its sizes, the new file is the store's: its pages in use end
        // before the old file's did (the file itself grows again on a writable open).
        guard !printed.isEmpty else { return nil }
        let used = try state.statistics().usedSize
        return used < before.usedSize
          ? nil : "the compaction was acknowledged and the store's pages end at \(used) bytes, as before"
      }
    ) { dir in
      try DiskFaultTests.populated(dir + "/s", people: 30)
      return ["compact", dir + "/s"]
    },
    // A copy in a new directory: the store untouched in every state, and once the backup
    // is acknowledged, the copy whole.
    Command(
      name: "backup",
      promised: { _, state, before in try Command.unchanged(state, before) },
      copy: { printed, state, before in
        guard !printed.isEmpty else { return nil }
        let copy = try EventStore(path: state + "/b", options: StoreOptions(readOnly: true))
        let report = try copy.verify()
        guard report.isOK else { return "the backup was acknowledged and does not verify: \(report.problems)" }
        return try Command.unchanged(copy, before).map { "the backup was acknowledged and \($0)" }
      }
    ) { dir in
      try DiskFaultTests.populated(dir + "/s", people: 30)
      return ["backup", dir + "/s", dir + "/b"]
    },
    // Personal values: each new subject's key is written to the subject-key file, which
    // must be on the disk before the first commit sealed with it.
    Command(
      name: "append-personal", keyed: true,
      promised: { printed, state, before in
        let acknowledged = Command.acknowledgements(printed)
        if let short = try Command.commits(acknowledged.count, state, before) { return short }
        for (i, _) in acknowledged.enumerated() {
          let person = ObjectID(UInt64(i + 1))
          let name = try state.read { try $0.value(person, "name") }
          if name != .string("Secret \(i)") {
            return "Person/\(i + 1) was acknowledged and its name reads \(String(describing: name))"
          }
        }
        return nil
      }
    ) { dir in
      try EventStore.generateKeyFile(at: dir + "/k.key")
      _ = try EventStore.create(
        at: dir + "/s", model: try EraseKillTests.model(), options: StoreOptions(keyFile: dir + "/k.key"))
      let lines = (0..<6).flatMap { i in
        [
          #"{"commit": "c\#(i)", "type": "insert", "object": "$p\#(i)", "entity": "Person"}"#,
          #"{"commit": "c\#(i)", "type": "set", "object": "$p\#(i)", "key": "name", "value": "Secret \#(i)"}"#,
        ]
      }
      try (lines.joined(separator: "\n") + "\n").write(toFile: dir + "/a.jsonl", atomically: true, encoding: .utf8)
      return ["append", dir + "/s", dir + "/a.jsonl", "--json", "--key-file", dir + "/k.key"]
    },
    // An erasure: the commit of its event, then the key's slot overwritten with zeros; once
    // acknowledged, no file of the store holds the key, and the name reads as erased.
    Command(
      name: "erase", keyed: true,
      promised: { printed, state, _ in
        guard !printed.isEmpty else { return nil }
        let key = try Data(contentsOf: URL(fileURLWithPath: state.path + "/../../data-key"))
        for (file, bytes) in EraseKillTests.files(state.path) where bytes.range(of: key) != nil {
          return "the erasure was acknowledged and \(file) holds the subject's data key"
        }
        let name = try state.read { try $0.value(ObjectID(1), "name") }
        guard case .sealed(let v)? = name, v.state == .erased else {
          return "the erasure was acknowledged and the name reads \(String(describing: name))"
        }
        return nil
      }
    ) { dir in try eraseSetup(dir) },
  ]

  /// A store at DIR/s of four people with personal names (its key in DIR/k.key, the first
  /// person's data key in DIR/data-key); the arguments of `erase --json` of the first.
  static func eraseSetup(_ dir: String) throws -> [String] {
    try EventStore.generateKeyFile(at: dir + "/k.key")
    let store = try EventStore.create(
      at: dir + "/s", model: try EraseKillTests.model(), options: StoreOptions(keyFile: dir + "/k.key"))
    let people = try #require(
      try store.write { tx in
        try (0..<4).map { i in try tx.insert("Person", ["name": .string("Secret \(i)"), "nick": .string("n\(i)")]) }
      }.value)
    let key = try store.env.read { try store.dbs.keyring?.testingDataKey(people[0], in: $0) }
    try Data(try #require(key)).write(to: URL(fileURLWithPath: dir + "/data-key"))
    return ["erase", dir + "/s", "Person/\(people[0].rawValue)", "--json"]
  }

  @Test(
    "a recorded run, cut at every step, with what was written since the last sync in order, not at all, or seeded parts of it",
    arguments: commands)
  func crashStates(command: Command) throws {
    let dir = temporaryDirectory("power-\(command.name)")
    defer { removeDirectory(dir) }
    let arguments = try command.setup(dir)
    try FileManager.default.createDirectory(atPath: dir + "/before", withIntermediateDirectories: true)
    try FileManager.default.copyItem(atPath: dir + "/s", toPath: dir + "/before/s")
    var env = ProcessInfo.processInfo.environment
    env["LD_PRELOAD"] = DiskFaultTests.shim
    env["EG_FAULT_PATH"] = dir + "/"
    env["EG_RECORD"] = dir + "/record"
    let run = try ToolRunner.run(
      at: ToolRunner.productsDirectory.appendingPathComponent("eventtool"), arguments, environment: env)
    #expect(run.status == 0, "\(command.name): \(run.err)")
    let steps = CrashStates.steps(try Data(contentsOf: URL(fileURLWithPath: dir + "/record")), root: dir + "/")
    let syncs = steps.filter { if case .sync = $0 { return true } else { return false } }.count
    #expect(syncs > 0, "\(command.name): the record holds its syncs")

    var g = SeededGenerator(seed: 2_026_12_07)
    var disk = CrashStates(before: dir + "/before")
    var states = 0
    let keyFile = command.keyed ? dir + "/k.key" : nil
    let beforeStore = try EventStore(path: dir + "/before/s", options: StoreOptions(readOnly: true, keyFile: keyFile))
    let before = try beforeStore.statistics()
    for (i, step) in steps.enumerated() {
      disk.apply(step)
      for cut in disk.cuts(samples: 4 * stressFactor, using: &g) {
        let state = dir + "/state"
        try? FileManager.default.removeItem(atPath: state)
        try disk.materialize(cut, into: state)
        states += 1
        let label =
          "\(command.name), cut after step \(i + 1) of \(steps.count), \(cut.names) of \(disk.pendingNames.count) pending name change(s), \(cut.pages.count) of \(disk.pending.count) pending page(s)"
        do {
          let store = try EventStore(path: state + "/s", options: StoreOptions(keyFile: keyFile))
          let report = try store.verify()
          #expect(report.isOK, "\(label): \(report.problems)")
          if let broken = try command.promised(disk.printed, store, before) { Issue.record("\(label): \(broken)") }
          if let broken = try command.copy?(disk.printed, state, before) { Issue.record("\(label): \(broken)") }
        } catch {
          Issue.record("\(label): the store does not open: \(error)")
        }
      }
    }
    #expect(
      try command.promised(disk.printed, beforeStore, before) != nil || command.copy != nil,
      "\(command.name): its acknowledgements were recorded, and the store before it does not hold them")
    print(
      "power loss, \(command.name): \(steps.count) steps (\(syncs) syncs), \(states) crash states opened and verified")
  }
}
