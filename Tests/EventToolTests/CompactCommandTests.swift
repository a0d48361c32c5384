import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("eventtool compact and backup")
struct CompactCommandTests {
  @Test("compact shrinks the file and keeps every entry of every database: sequences, identities, keys, positions")
  func keepsEverything() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    try await CompactFixture.store(s, people: 600)
    let before = try CompactFixture.dump(s)
    let stats = try ToolRunner.eventtool(["stats", s, "--json"])
    #expect(stats.status == 0)
    let free = try #require(
      (try JSONSerialization.jsonObject(with: Data(stats.out.utf8)) as? [String: Any])?["freePages"] as? Int)
    #expect(free > 0, "the deletes freed pages")
    let r = try ToolRunner.eventtool(["compact", s, "--json"])
    #expect(r.status == 0, "\(r.err)")
    let report = try #require(try JSONSerialization.jsonObject(with: Data(r.out.utf8)) as? [String: Any])
    let (sizeBefore, sizeAfter) = (report["sizeBefore"] as? Int ?? 0, report["sizeAfter"] as? Int ?? 0)
    #expect(sizeAfter < sizeBefore)
    #expect(try CompactFixture.dump(s) == before)
    #expect(!FileManager.default.fileExists(atPath: s + "/.compact"))
    #expect(try ToolRunner.eventtool(["verify", s]).status == 0)
    // Keys and positions still work as such: a retried commit is recognised, the consumer
    // resumes where it was.
    let store = try EventStore(path: s)
    #expect(try store.consumer("mailer").position() == 1234)
    var metadata = CommitMetadata()
    metadata.idempotencyKey = "order-3"
    let lastBefore = try store.lastSequence()
    let retried = try store.write(metadata: metadata) { tx in
      _ = try tx.insert("AddressBook", ["firstName": .string("again")])
    }
    #expect(retried.isDuplicate && retried.commit != nil)
    #expect(try store.lastSequence() == lastBefore)
  }

  @Test("compact refuses a store another process has open, naming it, and leaves the file as it was")
  func refusesStoreInUse() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    try UpcastKillTests.history(s, people: 100)
    let follower = try CompactFixture.start(["log", s, "--follow"])
    defer {
      kill(follower.processIdentifier, SIGKILL)
      follower.waitUntilExit()
    }
    // Wait until the follower has the store open (it prints the log first).
    let deadline = Date().addingTimeInterval(20)
    var r = try ToolRunner.eventtool(["compact", s])
    while r.status == 0 && Date() < deadline {
      Thread.sleep(forTimeInterval: 0.05)
      r = try ToolRunner.eventtool(["compact", s])
    }
    let file = try CompactFixture.dataFile(s)
    r = try ToolRunner.eventtool(["compact", s])
    #expect(r.status == 1)
    #expect(r.err.contains("is open in process \(follower.processIdentifier)"), "\(r.err)")
    #expect(try CompactFixture.dataFile(s) == file)
    #expect(try ToolRunner.eventtool(["verify", s]).status == 0)
  }

  @Test("compact and backup onto a full disk fail clearly and leave the store as it was")
  func fullDisk() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    try await CompactFixture.store(s, people: 600)
    let file = try CompactFixture.dataFile(s)
    let limit = file.count / 4
    let c = try CompactFixture.eventtool(limitingFilesTo: limit, ["compact", s])
    #expect(c.status == 1)
    #expect(c.err.contains("is the disk full?") && c.err.contains("the store is unchanged"), "\(c.err)")
    #expect(try CompactFixture.dataFile(s) == file)
    #expect(!FileManager.default.fileExists(atPath: s + "/.compact"))
    let b = try CompactFixture.eventtool(limitingFilesTo: limit, ["backup", s, dir + "/backup"])
    #expect(b.status == 1)
    #expect(b.err.contains("is the disk full?"), "\(b.err)")
    #expect(!FileManager.default.fileExists(atPath: dir + "/backup"), "the partial copy is removed")
    #expect(try CompactFixture.dataFile(s) == file)
    #expect(try ToolRunner.eventtool(["verify", s]).status == 0)
  }

  @Test("--drop-versions-before drops old versions, never the active one, the rollback's only when told")
  func dropVersions() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    try UpcastKillTests.history(s, people: 300)
    let upcast = try ToolRunner.eventtool([
      "upcast", s, "--model", examples + "/AddressBook.v2.model.json", "--mapping",
      examples + "/AddressBook.v1-v2.mapping.json",
    ])
    #expect(upcast.status == 0, "\(upcast.err)")
    let file = try CompactFixture.dataFile(s)
    let active = try ToolRunner.eventtool(["compact", s, "--drop-versions-before", "3"])
    #expect(active.status == 1)
    #expect(active.err.contains("would drop version 2, the active one"), "\(active.err)")
    let rollback = try ToolRunner.eventtool(["compact", s, "--drop-versions-before", "2"])
    #expect(rollback.status == 1)
    #expect(rollback.err.contains("--drop-rollback-version"), "\(rollback.err)")
    #expect(try CompactFixture.dataFile(s) == file)
    let told = try ToolRunner.eventtool(["compact", s, "--drop-versions-before", "2", "--drop-rollback-version"])
    #expect(told.status == 0, "\(told.err)")
    #expect(told.out.contains("dropped  version(s) 1"))
    #expect(try CompactFixture.dataFile(s).count < file.count)
    #expect(try ToolRunner.eventtool(["verify", s]).status == 0)
    let names = try ToolRunner.runSystem("/usr/bin/mdb_stat", ["-a", s]).out
    #expect(!names.contains("Status of log.v1\n") && names.contains("Status of log.v2\n"))
    #expect(try ToolRunner.eventtool(["rollback", s]).status == 1)
  }

  @Test("backup while writers commit: the copy opens and verifies on its own, its log a prefix of the store's")
  func backupUnderWriters() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    try UpcastKillTests.history(s, people: 300)
    // Two processes appending many small commits while the backups run.
    let writers = try (0..<2).map { i in
      let lines = (0..<3000).map {
        #"{"commit": "w\#(i)-\#($0)", "type": "insert", "object": "$p\#($0)", "entity": "AddressBook"}"# + "\n"
          + #"{"commit": "w\#(i)-\#($0)", "type": "set", "object": "$p\#($0)", "key": "firstName", "value": "w"}"#
          + "\n"
          + #"{"commit": "w\#(i)-\#($0)", "type": "set", "object": "$p\#($0)", "key": "lastName", "value": "w"}"#
      }
      let file = dir + "/w\(i).jsonl"
      try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
      return try CompactFixture.start(["append", s, file])
    }
    for (n, compact) in [(1, false), (2, true), (3, false)] {
      let r = try ToolRunner.eventtool(["backup", s, dir + "/b\(n)"] + (compact ? ["--compact"] : []))
      #expect(r.status == 0, "\(r.err)")
      #expect(r.out.contains("the copy opens and verifies"))
    }
    for p in writers {
      p.waitUntilExit()
      #expect(p.terminationStatus == 0)
    }
    let whole = try ToolRunner.eventtool(["log", s, "--json"]).out
    for n in 1...3 {
      #expect(try ToolRunner.eventtool(["verify", dir + "/b\(n)"]).status == 0)
      let copy = try ToolRunner.eventtool(["log", dir + "/b\(n)", "--json"]).out
      #expect(whole.hasPrefix(copy), "backup \(n)'s log is a prefix of the store's")
    }
  }

  @Test("--version names the release, the store format and LMDB")
  func version() throws {
    let r = try ToolRunner.eventtool(["--version"])
    #expect(r.status == 0)
    #expect(r.out.hasPrefix("eventtool ") && r.out.contains("store format \(EventStore.formatVersion)"))
    #expect(r.out.contains("LMDB"))
  }
}
