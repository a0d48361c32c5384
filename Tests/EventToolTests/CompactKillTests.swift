import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("eventtool compact, killed with SIGKILL")
struct CompactKillTests {
  @Test("compact killed at random moments leaves the old file or the new one, each verifying, every entry kept")
  func killedAtRandom() async throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    try await CompactFixture.store(s, people: 2500)
    let entries = try CompactFixture.dump(s)
    let original = try CompactFixture.dataFile(s)
    // How long an uninterrupted compaction takes here, on a copy: the kills land across it.
    try FileManager.default.copyItem(atPath: s, toPath: dir + "/timed")
    let started = Date()
    #expect(try ToolRunner.eventtool(["compact", dir + "/timed"]).status == 0)
    let whole = max(20, Int(Date().timeIntervalSince(started) * 1000))
    var g = SeededGenerator(seed: 1913)
    var (kills, oldFiles, newFiles) = (0, 0, 0)
    for round in 0..<20 {
      // Each round starts from the uncompacted file, so that every kill can land anywhere.
      try original.write(to: URL(fileURLWithPath: s + "/data.mdb"))
      let p = try CompactFixture.start(["compact", s])
      // Half the kills anywhere after the start, half in the run's last fifth, where the
      // copy is checked and swapped in.
      // The first kill comes at once, so that one lands however much faster the machine has
      // become since the timed run.
      let delay =
        round == 0 ? 0 : round % 2 == 0 ? g.int(whole / 4...whole * 11 / 10) : g.int(whole * 4 / 5...whole * 21 / 20)
      usleep(UInt32(delay) * 1000)
      if p.isRunning {
        kill(p.processIdentifier, SIGKILL)
        kills += 1
      }
      p.waitUntilExit()
      let now = try CompactFixture.dataFile(s)
      if now == original { oldFiles += 1 } else { newFiles += 1 }
      #expect(now == original || now.count < original.count, "the data file is the old one or a compacted one")
      let verify = try ToolRunner.eventtool(["verify", s])
      #expect(verify.status == 0, "\(verify.err)")
      #expect(try CompactFixture.dump(s) == entries, "every database's entries are as they were")
    }
    #expect(kills > 0)
    // A compaction after a killed one finds its leftover copy and finishes.
    let last = try ToolRunner.eventtool(["compact", s])
    #expect(last.status == 0, "\(last.err)")
    #expect(!FileManager.default.fileExists(atPath: s + "/.compact"))
    #expect(try CompactFixture.dump(s) == entries)
    print(
      "compact kills (a whole run \(whole) ms): \(kills) killed, \(oldFiles) left the old file, \(newFiles) the new one"
    )
  }
}
