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
  enum Step {
    /// Bytes written at an offset of a file (its path relative to the store).
    case write(file: String, offset: Int, bytes: Data, durableAlone: Bool)
    /// A sync of a file: every write of it before this is on the disk.
    case sync(file: String)
    /// An acknowledgement the command printed (a line of its standard output).
    case printed(String)
  }

  /// The steps of a record made under `store` (the store's directory, with a slash).
  static func steps(_ data: Data, store: String) -> [Step] {
    var steps: [Step] = []
    var at = data.startIndex
    func line() -> String? {
      guard let end = data[at...].firstIndex(of: UInt8(ascii: "\n")) else { return nil }
      defer { at = end + 1 }
      return String(decoding: data[at..<end], as: UTF8.self)
    }
    func relative(_ path: String) -> String { path.hasPrefix(store) ? String(path.dropFirst(store.count)) : path }
    while let header = line() {
      let fields = header.split(separator: " ", maxSplits: 3).map(String.init)
      switch fields.first {
      case "W":
        let offset = Int(fields[1]) ?? 0
        let length = Int(fields[2]) ?? 0
        let bytes = data[at..<at + length]
        at += length
        steps.append(.write(file: relative(fields[3]), offset: offset, bytes: Data(bytes), durableAlone: false))
      case "D":
        if case .write(let file, let offset, let bytes, _)? = steps.last {
          steps[steps.count - 1] = .write(file: file, offset: offset, bytes: bytes, durableAlone: true)
        }
      case "S": steps.append(.sync(file: relative(String(header.dropFirst(2)))))
      case "O":
        let length = Int(fields[1]) ?? 0
        steps.append(.printed(String(decoding: data[at..<at + length], as: UTF8.self)))
        at += length
      default: return steps
      }
    }
    return steps
  }

  /// `bytes` written at `offset`, cut at 4 KiB boundaries of the file.
  static func pages(file: String, offset: Int, bytes: Data) -> [(file: String, offset: Int, bytes: Data)] {
    var pages: [(file: String, offset: Int, bytes: Data)] = []
    var at = offset
    var rest = bytes[...]
    while !rest.isEmpty {
      let take = min(rest.count, 4096 - at % 4096)
      pages.append((file, at, Data(rest.prefix(take))))
      rest = rest.dropFirst(take)
      at += take
    }
    return pages
  }

  /// Applies `writes` to the files of `directory`, in order.
  static func apply(_ writes: [(file: String, offset: Int, bytes: Data)], to directory: String) throws {
    for w in writes {
      let path = directory + "/" + w.file
      if !FileManager.default.fileExists(atPath: path) {
        _ = FileManager.default.createFile(atPath: path, contents: nil)
      }
      let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
      try handle.seek(toOffset: UInt64(w.offset))
      try handle.write(contentsOf: w.bytes)
      try handle.close()
    }
  }

  struct Command: Sendable, CustomStringConvertible {
    let name: String
    /// Whether the store has personal attributes, its key-encryption key in DIR/k.key.
    var keyed = false
    /// What the command had promised once it printed `printed`, checked against a crash
    /// state opened as a store (`before`: the store's statistics before the command): a
    /// failure, or nil.
    let promised: @Sendable (_ printed: String, _ state: EventStore, _ before: StoreStatistics) throws -> String?
    let setup: @Sendable (String) throws -> [String]
    var description: String { name }

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
        let key = try Data(contentsOf: URL(fileURLWithPath: state.path + "/../data-key"))
        for (file, bytes) in EraseKillTests.files(state.path) where bytes.range(of: key) != nil {
          return "the erasure was acknowledged and \(file) holds the subject's data key"
        }
        let name = try state.read { try $0.value(ObjectID(1), "name") }
        guard case .sealed(let v)? = name, v.state == .erased else {
          return "the erasure was acknowledged and the name reads \(String(describing: name))"
        }
        return nil
      }
    ) { dir in
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
    },
  ]

  @Test(
    "a recorded run, cut at every step, with what was written since the last sync in order, not at all, or seeded parts of it",
    arguments: commands)
  func crashStates(command: Command) throws {
    let dir = temporaryDirectory("power-\(command.name)")
    defer { removeDirectory(dir) }
    let arguments = try command.setup(dir)
    try FileManager.default.copyItem(atPath: dir + "/s", toPath: dir + "/before")
    var env = ProcessInfo.processInfo.environment
    env["LD_PRELOAD"] = DiskFaultTests.shim
    env["EG_FAULT_PATH"] = dir + "/s/"
    env["EG_RECORD"] = dir + "/record"
    let run = try ToolRunner.run(
      at: ToolRunner.productsDirectory.appendingPathComponent("eventtool"), arguments, environment: env)
    #expect(run.status == 0, "\(command.name): \(run.err)")
    let steps = Self.steps(try Data(contentsOf: URL(fileURLWithPath: dir + "/record")), store: dir + "/s/")
    let syncs = steps.filter { if case .sync = $0 { return true } else { return false } }.count
    #expect(syncs > 0, "\(command.name): the record holds its syncs")

    var g = SeededGenerator(seed: 2_026_12_07)
    var durable: [(file: String, offset: Int, bytes: Data)] = []
    var pending: [(file: String, offset: Int, bytes: Data)] = []
    var printed = ""
    var states = 0
    let keyFile = command.keyed ? dir + "/k.key" : nil
    let beforeStore = try EventStore(path: dir + "/before", options: StoreOptions(readOnly: true, keyFile: keyFile))
    let before = try beforeStore.statistics()
    for (i, step) in steps.enumerated() {
      switch step {
      case .write(let file, let offset, let bytes, let alone):
        // A write of several pages may reach the disk in part: each 4 KiB page of it is a
        // write of its own (one page is taken as written whole, as the drive promises).
        let pages = Self.pages(file: file, offset: offset, bytes: bytes)
        if alone { durable += pages } else { pending += pages }
      case .sync(let file):
        durable += pending.filter { $0.file == file }
        pending.removeAll { $0.file == file }
      case .printed(let text):
        printed += text
      }
      // The states a cut after this step allows: what is durable, plus all that is pending
      // (in order), none of it, or a seeded subset.
      var choices: [[Int]] = [Array(pending.indices), []]
      if pending.count > 1 {
        for _ in 0..<(4 * stressFactor) { choices.append(pending.indices.filter { _ in g.next() % 2 == 0 }) }
      }
      for chosen in Set(choices.map { $0 }).sorted(by: { $0.count > $1.count }) {
        let state = dir + "/state"
        try? FileManager.default.removeItem(atPath: state)
        try FileManager.default.copyItem(atPath: dir + "/before", toPath: state)
        try? FileManager.default.removeItem(atPath: state + "/lock.mdb")
        try Self.apply(durable + chosen.map { pending[$0] }, to: state)
        states += 1
        let label =
          "\(command.name), cut after step \(i + 1) of \(steps.count), \(chosen.count) of \(pending.count) pending write(s)"
        do {
          let store = try EventStore(path: state, options: StoreOptions(keyFile: keyFile))
          let report = try store.verify()
          #expect(report.isOK, "\(label): \(report.problems)")
          if let broken = try command.promised(printed, store, before) {
            Issue.record("\(label): \(broken)")
          }
        } catch {
          Issue.record("\(label): the store does not open: \(error)")
        }
      }
    }
    #expect(
      try command.promised(printed, beforeStore, before) != nil,
      "\(command.name): its acknowledgements were recorded, and the store before it does not hold them")
    print(
      "power loss, \(command.name): \(steps.count) steps (\(syncs) syncs), \(states) crash states opened and verified")
  }
}
