import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("eventtool upcast, killed and resumed")
struct UpcastKillTests {
  /// A v1 address book with history: people inserted, then phones changed, emptied and removed.
  static func history(_ path: String, people: Int) throws {
    let store = try EventStore.create(at: path, model: try Model(contentsOf: examples + "/AddressBook.v1.model.json"))
    var g = SeededGenerator(seed: 77)
    var ids: [ObjectID] = []
    for batch in stride(from: 0, to: people, by: 50) {
      ids += try #require(
        store.write { tx in
          try (batch..<min(people, batch + 50)).map { i in
            try tx.insert(
              "AddressBook",
              ["firstName": .string("f\(i)"), "lastName": .string("l\(i)"), "phone1": .string("03-\(i)")])
          }
        }.value)
    }
    for round in 0..<3 {
      for chunk in stride(from: 0, to: ids.count, by: 40) {
        try store.write { tx in
          for id in ids[chunk..<min(ids.count, chunk + 40)] {
            switch g.next() % 4 {
            case 0: try tx.set(id, "phone1", nil)
            case 1: try tx.set(id, "phone2", .string("090-\(round)-\(id.rawValue)"))
            case 2: try tx.set(id, "phone2", .string(""))
            default: try tx.set(id, "phone1", .string("04-\(round)"))
            }
          }
        }
      }
    }
  }

  /// Every key and value of the store's v2 databases, as LMDB's own tool prints them.
  static func dump(_ path: String) throws -> [String: String] {
    var result: [String: String] = [:]
    for base in ["log", "objects", "identities", "links", "entities", "history", "dedupe", "index", "members"] {
      let r = try ToolRunner.runSystem("/usr/bin/mdb_dump", ["-s", "\(base).v2", path])
      result[base] = r.out.split(separator: "\n").drop { $0 != "HEADER=END" }.joined(separator: "\n")
    }
    return result
  }

  @Test("an upcast killed with SIGKILL at random points ends byte for byte like an uninterrupted one")
  func killAndResume() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    try Self.history(dir + "/a", people: 1500)
    try FileManager.default.copyItem(atPath: dir + "/a", toPath: dir + "/b")
    // Untouched, to start over from when a run ends before the first kill (this thread can
    // oversleep on a loaded machine, and then there would be nothing resumed to compare).
    try FileManager.default.copyItem(atPath: dir + "/a", toPath: dir + "/pristine")
    let args = [
      "--model", examples + "/AddressBook.v2.model.json", "--mapping", examples + "/AddressBook.v1-v2.mapping.json",
      "--batch", "400",
    ]
    var g = SeededGenerator(seed: 99)
    var kills = 0
    var finished = false
    for attempt in 0..<40 where !finished {
      let p = Process()
      p.executableURL = ToolRunner.productsDirectory.appendingPathComponent("eventtool")
      p.arguments = ["upcast", dir + "/a"] + args
      p.standardOutput = FileHandle.nullDevice
      p.standardError = FileHandle.nullDevice
      try p.run()
      // The first is killed at once, so that one kill lands however fast the machine is.
      Thread.sleep(forTimeInterval: attempt == 0 ? 0 : Double(20 + g.next() % 150) / 1000)
      let killed = p.isRunning
      if killed { kill(p.processIdentifier, SIGKILL) }
      p.waitUntilExit()
      // The store's version says whether the run finished, not the exit status: a run
      // killed after its last commit but before it exited (seen under a sanitizer's load)
      // has finished, and another run would be refused ("already at version 2").
      finished = try EventStore(path: dir + "/a", options: StoreOptions(readOnly: true)).model.version == 2
      #expect(finished || killed, "a run that was not killed did not finish: status \(p.terminationStatus)")
      if killed && !finished { kills += 1 }
      if finished && kills == 0 {
        try FileManager.default.removeItem(atPath: dir + "/a")
        try FileManager.default.copyItem(atPath: dir + "/pristine", toPath: dir + "/a")
        finished = false
      }
    }
    if !finished {
      let last = try ToolRunner.eventtool(["upcast", dir + "/a"] + args)
      #expect(last.status == 0, "\(last.err)")
    }
    #expect(kills > 0)
    let whole = try ToolRunner.eventtool(["upcast", dir + "/b"] + args)
    #expect(whole.status == 0, "\(whole.err)")
    let a = try Self.dump(dir + "/a")
    let b = try Self.dump(dir + "/b")
    for (name, text) in b {
      #expect(a[name] == text, "\(name).v2 differs")
      #expect(!text.isEmpty)
    }
    #expect(try ToolRunner.eventtool(["verify", dir + "/a"]).status == 0)
  }

  @Test("fetch prints the matching objects and says whether an index served them")
  func fetchCommand() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    #expect(try ToolRunner.eventtool(["init", dir + "/s", "--model", examples + "/Company.model.json"]).status == 0)
    let lines = """
      {"id": "c1", "entity": "Company", "attributes": {"name": "ACME"}}
      {"id": "c2", "entity": "Company", "attributes": {"name": "Initech"}}
      {"id": "c3", "entity": "Company", "attributes": {"name": "Globex"}}
      """
    #expect(try ToolRunner.eventtool(["import", dir + "/s", "-"], input: lines).status == 0)
    let r = try ToolRunner.eventtool(["fetch", dir + "/s", "Company", "--where", "name == 'Globex'"])
    #expect(r.status == 0)
    #expect(r.out.contains("Company/3"))
    #expect(r.err.contains("index on name"))
    let sorted = try ToolRunner.eventtool(["fetch", dir + "/s", "Company", "--sort", "-name", "--limit", "2"])
    #expect(
      sorted.out.split(separator: "\n").map { $0.split(separator: " ").first ?? "" } == ["Company/2", "Company/3"])
    let bad = try ToolRunner.eventtool(["fetch", dir + "/s", "Company", "--where", "nme == 'x'"])
    #expect(bad.status == 1)
    #expect(bad.err.contains("did you mean 'name'"))
  }
}
