import EventGraph
import Foundation
import TestSupport
import Testing

/// A disk that fails under each writing command: the n-th write or sync of the store's
/// files made to fail (EIO, ENOSPC, a short write) by the fault shim, loaded with
/// LD_PRELOAD into the `eventtool` child (`Sources/CFaultShim`).
@Suite("A disk that fails: EIO, ENOSPC, short writes and failed syncs under every writing command")
struct DiskFaultTests {
  static let shim = ToolRunner.productsDirectory.appendingPathComponent("libEventGraphFaultShim.so").path
  static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Docs/examples").path

  /// A command run against a store made afresh for each fault: `setup` makes the store and
  /// returns the arguments; `check` looks at the store afterwards.
  struct Command: Sendable, CustomStringConvertible {
    let name: String
    /// The part of the files' paths whose calls count (the store's directory, or a backup's).
    let files: String
    let setup: @Sendable (String) throws -> [String]
    let check: @Sendable (String, ToolRunner.Result) throws -> Void
    var description: String { name }
  }

  static func model() throws -> Model {
    let path = examples + "/AddressBook.v1.model.json"
    return try Model(json: Array(try Data(contentsOf: URL(fileURLWithPath: path))), file: path)
  }

  /// A store of `people` people, each set twice (history to compact).
  static func populated(_ path: String, people: Int = 40) throws {
    let store = try EventStore.create(at: path, model: try model())
    for i in 0..<people {
      try store.write { tx in
        let p = try tx.insert("AddressBook", ["firstName": .string("P\(i)"), "lastName": .string("L\(i)")])
        try tx.set(p, "phone1", .string("555-\(i)"))
      }
    }
  }

  /// What a store holds, as `export` prints it; what a failed command must leave as it was.
  static func content(_ path: String) throws -> String {
    let r = try ToolRunner.eventtool(["export", path])
    #expect(r.status == 0, "export \(path): \(r.err)")
    return r.out
  }

  static func verified(_ path: String) throws {
    let store = try EventStore(path: path, options: StoreOptions(readOnly: true))
    let report = try store.verify()
    #expect(report.isOK, "\(path) after the fault: \(report.problems)")
  }

  /// A new store at DIR/s and DIR/a.jsonl of `commits` keyed commits (a person each); the
  /// arguments of `append --json` of it.
  static func appendSetup(_ dir: String, commits: Int) throws -> [String] {
    _ = try EventStore.create(at: dir + "/s", model: try model())
    let lines = (0..<commits).flatMap { i in
      [
        #"{"commit": "c\#(i)", "type": "insert", "object": "$p\#(i)", "entity": "AddressBook"}"#,
        #"{"commit": "c\#(i)", "type": "set", "object": "$p\#(i)", "key": "firstName", "value": "P\#(i)"}"#,
        #"{"commit": "c\#(i)", "type": "set", "object": "$p\#(i)", "key": "lastName", "value": "L\#(i)"}"#,
      ]
    }
    try (lines.joined(separator: "\n") + "\n").write(toFile: dir + "/a.jsonl", atomically: true, encoding: .utf8)
    return ["append", dir + "/s", dir + "/a.jsonl", "--json"]
  }

  static let commands: [Command] = [
    Command(
      name: "append", files: "/s/",
      setup: { dir in
        try appendSetup(dir, commits: 5)
      },
      check: { dir, result in
        try verified(dir + "/s")
        // Every commit acknowledged is there; a refused one is not.
        let acknowledged = result.out.split(separator: "\n").filter { $0.hasPrefix("{\"commit\"") }.count
        let commits = try EventStore(path: dir + "/s", options: StoreOptions(readOnly: true)).statistics().commits
        #expect(commits == acknowledged, "append: \(acknowledged) commit(s) acknowledged, \(commits) in the log")
      }),
    Command(
      name: "import", files: "/s/",
      setup: { dir in
        try populated(dir + "/source")
        try content(dir + "/source").write(toFile: dir + "/people.jsonl", atomically: true, encoding: .utf8)
        _ = try EventStore.create(at: dir + "/s", model: try model())
        return ["import", dir + "/s", dir + "/people.jsonl", "--batch", "10"]
      },
      check: { dir, result in
        try verified(dir + "/s")
        let store = try EventStore(path: dir + "/s", options: StoreOptions(readOnly: true))
        let count = try store.read { try $0.objects(of: "AddressBook").count }
        #expect(count % 10 == 0, "import: whole batches only, \(count) objects")
        if result.status == 0 { #expect(count == 40) }
      }),
    Command(
      name: "compact", files: "/s/",
      setup: { dir in
        try populated(dir + "/s")
        try content(dir + "/s").write(toFile: dir + "/before", atomically: true, encoding: .utf8)
        return ["compact", dir + "/s"]
      },
      check: { dir, _ in
        try verified(dir + "/s")
        #expect(try content(dir + "/s") == String(contentsOfFile: dir + "/before", encoding: .utf8))
      }),
    Command(
      name: "backup", files: "/b",
      setup: { dir in
        try populated(dir + "/s")
        try content(dir + "/s").write(toFile: dir + "/before", atomically: true, encoding: .utf8)
        return ["backup", dir + "/s", dir + "/b"]
      },
      check: { dir, result in
        try verified(dir + "/s")
        let before = try String(contentsOfFile: dir + "/before", encoding: .utf8)
        #expect(try content(dir + "/s") == before)
        if result.status == 0 {
          try verified(dir + "/b")
          #expect(try content(dir + "/b") == before)
        } else {
          #expect(
            !FileManager.default.fileExists(atPath: dir + "/b/data.mdb"),
            "backup: a failed backup leaves no store where it was to be")
        }
      }),
    Command(
      name: "erase", files: "/s/",
      setup: { dir in try PowerLossTests.eraseSetup(dir) },
      check: { dir, result in
        // Opened writable, the store finishes an erasure whose commit is there: then no
        // file holds the key, and the name reads as erased; a refused one left it readable.
        let store = try EventStore(path: dir + "/s", options: StoreOptions(keyFile: dir + "/k.key"))
        #expect(try store.verify().isOK, "erase: the store verifies")
        let name = try store.read { try $0.value(ObjectID(1), "name") }
        let erased = try store.read { try $0.commits().flatMap(\.events) }.contains(.erase(ObjectID(1), reason: nil))
        if result.status == 0 { #expect(erased, "erase: acknowledged, and no erasure event") }
        if erased {
          guard case .sealed(let v)? = name, v.state == .erased else {
            Issue.record("erase: the erasure is committed and the name reads \(String(describing: name))")
            return
          }
          let key = try Data(contentsOf: URL(fileURLWithPath: dir + "/data-key"))
          for (file, bytes) in EraseKillTests.files(dir + "/s") where bytes.range(of: key) != nil {
            Issue.record("erase: \(file) still holds the erased subject's key")
          }
        } else {
          #expect(name == .string("Secret 0"), "erase: refused, and the name reads \(String(describing: name))")
        }
      }),
    Command(
      name: "upcast", files: "/s/",
      setup: { dir in
        try populated(dir + "/s", people: 20)
        return [
          "upcast", dir + "/s", "--model", examples + "/AddressBook.v2.model.json", "--mapping",
          examples + "/AddressBook.v1-v2.mapping.json",
        ]
      },
      check: { dir, result in
        try verified(dir + "/s")
        let store = try EventStore(path: dir + "/s", options: StoreOptions(readOnly: true))
        if result.status == 0 { #expect(store.model.version == 2) }
        #expect(try store.commitRecords(from: 1, version: 1).count == 20, "upcast: version 1's log as it was")
      }),
  ]

  enum Fault: String, CaseIterable, Sendable {
    case writeEIO = "write:EIO", syncEIO = "sync:EIO", writeENOSPC = "write:ENOSPC", shortWrite = "write:SHORT"
    var kind: String { String(rawValue.prefix { $0 != ":" }) }
  }

  /// Runs `arguments` with the shim: `spec` the fault (nil: none, counting the calls).
  static func run(_ arguments: [String], dir: String, files: String, spec: String?) throws -> ToolRunner.Result {
    var env = ProcessInfo.processInfo.environment
    env["LD_PRELOAD"] = shim
    env["EG_FAULT_PATH"] = dir + files
    env["EG_FAULT_LOG"] = dir + "/fault.log"
    env["EG_FAULT_COUNTS"] = dir + "/counts"
    if let spec { env["EG_FAULT"] = spec }
    return try ToolRunner.run(
      at: ToolRunner.productsDirectory.appendingPathComponent("eventtool"), arguments, environment: env)
  }

  @Test(
    "each writing command with its n-th write or sync failed (every call for EIO, a seeded sample for ENOSPC and short writes): a clear error naming the file, nothing acknowledged lost, the store opens and verifies",
    arguments: commands)
  func faults(command: Command) throws {
    try #require(FileManager.default.fileExists(atPath: Self.shim), "the fault shim is built with the tests")
    var g = SeededGenerator(seed: 1_207)
    var covered: [String] = []
    // How many calls of each kind the command makes, uninterrupted.
    let calibration = temporaryDirectory("fault-\(command.name)")
    defer { removeDirectory(calibration) }
    let plain = try Self.run(try command.setup(calibration), dir: calibration, files: command.files, spec: nil)
    #expect(plain.status == 0, "\(command.name) without a fault: \(plain.err)")
    let counts = try String(contentsOfFile: calibration + "/counts", encoding: .utf8)
    func count(_ kind: String) -> Int {
      counts.split(separator: "\n").first { $0.hasPrefix(kind + " ") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
    }
    for fault in Fault.allCases {
      let calls = count(fault.kind)
      guard calls > 0 else {
        covered.append("\(fault.rawValue): no call")
        continue
      }
      // Every call for EIO (the faults that matter most); a seeded sample of the others,
      // every call under Tools/stress.
      let all = Array(1...calls)
      let chosen =
        fault == .writeEIO || fault == .syncEIO || stressFactor > 1
        ? all : Array(Set((0..<3).map { _ in all[g.int(0...all.count - 1)] })).sorted()
      var failed = 0
      for n in chosen {
        let dir = temporaryDirectory("fault-\(command.name)-\(n)")
        defer { removeDirectory(dir) }
        let arguments = try command.setup(dir)
        let result = try Self.run(
          arguments, dir: dir, files: command.files,
          spec: "\(fault.rawValue.replacingOccurrences(of: ":", with: ":\(n):"))")
        let hit = FileManager.default.fileExists(atPath: dir + "/fault.log")
        let label = "\(command.name) with \(fault.rawValue) at call \(n)"
        #expect(result.status == 0 || result.status == 1, "\(label): exit \(result.status) \(result.err)")
        if result.status != 0 {
          failed += 1
          #expect(hit, "\(label) failed without the fault: \(result.err)")
          #expect(result.err.contains(dir), "\(label): the error names the file: \(result.err)")
        }
        try command.check(dir, result)
      }
      covered.append("\(fault.rawValue): \(chosen.count) of \(calls) call(s), \(failed) refused")
    }
    print("disk faults, \(command.name): " + covered.joined(separator: "; "))
  }
}
