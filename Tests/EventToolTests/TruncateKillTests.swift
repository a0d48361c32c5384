import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("eventtool truncate, killed with SIGKILL")
struct TruncateKillTests {
  @Test("truncate killed at random moments leaves the store as it was or truncated, whole, and verified")
  func killedAtRandom() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    _ = try RetentionCLITests.store(s, updates: 1500)
    var exported = ""
    try EventStore(path: s, options: StoreOptions(readOnly: true)).export { exported += $0 + "\n" }
    // The kills follow the machine's speed: the span they are drawn from is the last
    // uninterrupted run's (every fourth run).
    var whole = 50
    var g = SeededGenerator(seed: 2612)
    var (kills, truncated, kept) = (0, 0, 0)
    var keep = 1400
    for i in 0..<16 {
      let before = try EventStore(path: s, options: StoreOptions(readOnly: true)).commitRecords(
        from: 1, maxCommits: 10_000, maxBytes: .max)
      let run = Process()
      run.executableURL = ToolRunner.productsDirectory.appendingPathComponent("eventtool")
      run.arguments = ["truncate", s, "--keep-commits", String(keep), "--no-compact"]
      run.standardOutput = FileHandle.nullDevice
      run.standardError = FileHandle.nullDevice
      let began = Date()
      try run.run()
      if i % 4 != 3 {
        usleep(UInt32(g.int(0...whole)) * 1000)
        if run.isRunning {
          kill(run.processIdentifier, SIGKILL)
          kills += 1
        }
      }
      run.waitUntilExit()
      if i % 4 == 3 { whole = max(5, Int(Date().timeIntervalSince(began) * 1000)) }
      let store = try EventStore(path: s, options: StoreOptions(readOnly: true))
      let after = try store.commitRecords(from: 1, maxCommits: 10_000, maxBytes: .max)
      if after == before {
        kept += 1
      } else {
        truncated += 1
        // Truncated whole: the base, then exactly the last `keep` commits of before.
        #expect(after.count == keep + 1, "run \(i)")
        #expect(Array(after.dropFirst()) == Array(before.suffix(keep)), "run \(i)")
        #expect(
          try after.first?.decoded().metadata.base?.lastSequence
            == before.suffix(keep).first.map { $0.firstSequence - 1 })
        keep -= 90
      }
      var text = ""
      try store.export { text += $0 + "\n" }
      #expect(text == exported, "run \(i)")
      let report = try store.verify()
      #expect(report.isOK, "run \(i): \(report.problems)")
    }
    #expect(truncated > 0)
    print("truncate kills (a whole run \(whole) ms): \(kills) killed, \(truncated) truncated, \(kept) as before")
  }
}
