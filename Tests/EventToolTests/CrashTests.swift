import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("Crash safety: a writer killed with SIGKILL")
struct CrashTests {
  @Test("a store whose writer was killed mid-stream opens, verifies, and holds exactly the whole commits")
  func killedWriter() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = dir + "/s"
    var generator = SeededGenerator(seed: 0xC0FFEE)
    for round in 0..<(3 * stressFactor) {
      let process = Process()
      process.executableURL = ToolRunner.productsDirectory.appendingPathComponent("StressWriter")
      process.arguments = [path, "--per-commit", "20", "--author", "round\(round)"]
      let out = Pipe()
      process.standardOutput = out
      process.standardError = FileHandle.nullDevice
      try process.run()
      // Kill after a random number of reported commits.
      let killAfter = 5 + Int(generator.next() % 40)
      var reported = 0
      var buffer = Data()
      while reported < killAfter {
        let chunk = out.fileHandleForReading.availableData
        if chunk.isEmpty { break }
        buffer.append(chunk)
        reported = String(decoding: buffer, as: UTF8.self).split(separator: "\n").filter { $0.hasPrefix("done ") }.count
      }
      kill(process.processIdentifier, SIGKILL)
      process.waitUntilExit()
      #expect(process.terminationReason == .uncaughtSignal)
      let done = Set(
        String(decoding: buffer, as: UTF8.self).split(separator: "\n").compactMap { line -> Int64? in
          line.hasPrefix("done ") ? Int64(line.dropFirst(5)) : nil
        })
      #expect(done.count >= killAfter)

      let store = try EventStore(path: path)
      #expect(try store.verify().isOK)
      try store.read { s throws in
        let groups = try s.objects(of: "Group")
        var seen: [Int64] = []
        for g in groups {
          let items = try s.related(g, "items")
          // No part of a commit: every group has all its items, and they have its batch.
          #expect(items.count == 20)
          let batch = try s.value(g, "batch")?.integerValue ?? -1
          if try s.value(items.first ?? g, "payload")?.stringValue?.hasPrefix("round\(round)-") == true {
            seen.append(batch)
          }
          for item in items { #expect(try s.value(item, "batch") == .int64(batch)) }
        }
        // Every commit the child reported done is there.
        #expect(done.isSubset(of: Set(seen)))
        #expect(Set(seen).count <= done.count + 1)
      }
    }
  }
}
