import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("eventtool truncate and retention")
struct RetentionCLITests {
  /// A company store whose employee's salary was changed `updates` times, a commit each.
  static func store(_ path: String, updates: Int) throws -> ObjectID {
    try CLIWritesTests.initStore(path, "/Company.model.json")
    let store = try EventStore(path: path)
    let employee = try #require(
      try store.write { tx in
        let c = try tx.insert("Company", ["name": .string("ACME")])
        let e = try tx.insert("Employee", ["name": .string("Momo")])
        try tx.link(c, "employees", e)
        return e
      }.value)
    for i in 0..<updates {
      try store.write { tx in try tx.set(employee, "salary", .decimal(Decimal(1000 + i))) }
    }
    return employee
  }

  static func json(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  @Test("truncate --keep-commits folds the rest into a base, compacts, and log, stats and verify tell of it")
  func truncateAndLook() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    let employee = try Self.store(s, updates: 300)
    let exported = try ToolRunner.eventtool(["export", s])
    let dry = try ToolRunner.eventtool(["truncate", s, "--keep-commits", "10", "--dry-run", "--json"])
    #expect(dry.status == 0, "\(dry.err)")
    let planned = try Self.json(dry.out)
    #expect(planned["dryRun"] as? Bool == true && planned["commits"] as? Int == 291)
    #expect(try ToolRunner.eventtool(["log", s, "--json"]).out.contains("\"type\": \"base\"") == false)
    let r = try ToolRunner.eventtool(["truncate", s, "--keep-commits", "10", "--json"])
    #expect(r.status == 0, "\(r.err)")
    let done = try Self.json(r.out)
    for key in ["cut", "commits", "events", "baseEvents", "historyEntries", "objectsShortened"] {
      #expect(done[key] as? Int == planned[key] as? Int, "\(key)")
    }
    #expect(done["historyEntries"] as? Int ?? 0 >= 290)
    #expect((done["sizeAfter"] as? Int ?? .max) < (done["sizeBefore"] as? Int ?? 0))
    #expect(try ToolRunner.eventtool(["export", s]).out == exported.out)
    #expect(try ToolRunner.eventtool(["verify", s]).status == 0)
    let cut = try #require(done["cut"] as? Int)
    let log = try ToolRunner.eventtool(["log", s, "--json"]).out.split(separator: "\n")
    #expect(log.count == 11, "the base and ten commits of one event")
    let base = try Self.json(String(log[0]))
    #expect(base["type"] as? String == "base" && base["lastSeq"] as? Int == cut - 1)
    #expect(base["objects"] as? [String] == ["Company/1", "Employee/2"])
    let text = try ToolRunner.eventtool(["log", s]).out
    #expect(text.hasPrefix("base of commits 1...291"))
    #expect(text.contains("history before sequence \(cut) truncated on"))
    let object = try ToolRunner.eventtool(["log", s, "--object", "Employee/\(employee.rawValue)"])
    #expect(object.status == 0 && object.out.hasPrefix("base of commits"), "\(object.err)")
    let stats = try Self.json(try ToolRunner.eventtool(["stats", s, "--json"]).out)
    let baseStats = try #require(stats["base"] as? [String: Any])
    #expect(baseStats["commit"] as? Int == 291 && baseStats["lastSequence"] as? Int == cut - 1)
    #expect((stats["history"] as? [String: Int])?["Employee"] == 11)
    #expect(try ToolRunner.eventtool(["stats", s]).out.contains("history  Employee: 11 entries"))
    // Reads before the base: refused, saying when history was truncated.
    for args in [
      ["show", s, "Employee/2", "--at", "5"], ["log", s, "--from", "5"], ["export", s, "--at", "5"],
      ["export", s, "--at-commit", "3"], ["clone", s, "Company/1", "--at", "5"],
      ["snapshot", s, "--out", dir + "/snap", "--at", "5"],
    ] {
      let refused = try ToolRunner.eventtool(args)
      #expect(refused.status == 1, "\(args)")
      #expect(refused.err.contains("history before sequence \(cut - 1) was truncated on"), "\(args): \(refused.err)")
    }
    // The state at the cut is still read.
    let atCut = try ToolRunner.eventtool(["show", s, "Employee/2", "--at", String(cut - 1), "--json"])
    #expect(atCut.status == 0, "\(atCut.err)")
    #expect(atCut.out.contains("\"salary\": \"1289\""), "the salary as commit 291 left it")
  }

  @Test("a recorded policy is shown, applied by truncate without a cut, and turned off")
  func policies() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    _ = try Self.store(s, updates: 40)
    #expect(try ToolRunner.eventtool(["retention", s]).out.contains("keeps all its history"))
    let set = try ToolRunner.eventtool(["retention", s, "--keep-commits", "5"])
    #expect(set.status == 0 && set.out.contains("keeps the last 5 commits"), "\(set.err)")
    #expect(try ToolRunner.eventtool(["retention", s, "--json"]).out.contains("\"keepCommits\": 5"))
    #expect(try ToolRunner.eventtool(["stats", s]).out.contains("retain   keeps the last 5 commits"))
    let applied = try ToolRunner.eventtool(["truncate", s, "--no-compact"])
    #expect(applied.status == 0 && applied.out.contains("truncated"), "\(applied.err)")
    #expect(!applied.out.contains("compacted"))
    #expect(try ToolRunner.eventtool(["log", s, "--json"]).out.split(separator: "\n").count == 6)
    #expect(try ToolRunner.eventtool(["truncate", s]).out.contains("nothing to truncate"))
    let age = try ToolRunner.eventtool(["retention", s, "--keep", "90d"])
    #expect(age.out.contains("keeps the commits of the last 90d"), "\(age.out)")
    #expect(try ToolRunner.eventtool(["truncate", s, "--dry-run"]).out.contains("nothing to truncate"))
    #expect(
      try ToolRunner.eventtool(["truncate", s, "--older-than", "0s", "--dry-run"]).out.contains("would truncate"))
    #expect(try ToolRunner.eventtool(["retention", s, "--off"]).out.contains("keeps all its history"))
  }

  @Test("an upcast of a truncated store gives the state the upcast of the whole one gives, and verifies")
  func upcastAfterTruncation() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let (s, twin) = (dir + "/s", dir + "/twin")
    for path in [s, twin] {
      try CLIWritesTests.initStore(path)
      let store = try EventStore(path: path)
      for i in 0..<30 {
        try store.write { tx in
          let a = try tx.insert("AddressBook", ["firstName": .string("p\(i)"), "lastName": .string("q")])
          try tx.set(a, "phone1", .string("03-\(i)"))
          if i % 3 == 0 { try tx.set(a, "phone2", .string("090-\(i)")) }
        }
      }
    }
    let truncated = try ToolRunner.eventtool(["truncate", s, "--keep-commits", "7"])
    #expect(truncated.status == 0, "\(truncated.err)")
    for path in [s, twin] {
      let r = try ToolRunner.eventtool([
        "upcast", path, "--model", examples + "/AddressBook.v2.model.json", "--mapping",
        examples + "/AddressBook.v1-v2.mapping.json",
      ])
      #expect(r.status == 0, "\(path): \(r.err)")
      #expect(try ToolRunner.eventtool(["verify", path]).status == 0)
    }
    let (a, b) = (try ToolRunner.eventtool(["export", s]).out, try ToolRunner.eventtool(["export", twin]).out)
    #expect(!a.isEmpty && a == b)
    // The commits after the cut upcast to the same events as the whole store's last seven
    // (their sequences aside: the new log's base is shorter).
    func lastCommits(_ path: String) throws -> [String] {
      let lines = try ToolRunner.eventtool(["log", path]).out.split(separator: "\n")
      let starts = lines.indices.filter { lines[$0].hasPrefix("commit ") }
      return lines[starts[starts.count - 7]...].filter { !$0.hasPrefix("commit ") }.map {
        String($0.drop { $0 == " " }.drop { $0 != " " })
      }
    }
    #expect(try lastCommits(s) == lastCommits(twin))
    // And the truncated store rolls back to its truncated v1.
    #expect(try ToolRunner.eventtool(["rollback", s, "--to", "1"]).status == 0)
    #expect(try ToolRunner.eventtool(["verify", s]).status == 0)
  }
}
