import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("the space of an upcast")
struct UpcastSpaceTests {
  static let arguments = [
    "--model", examples + "/AddressBook.v2.model.json", "--mapping", examples + "/AddressBook.v1-v2.mapping.json",
    "--batch", "400",
  ]

  @Test("an upcast after a rollback, and one resumed after a kill, reuse the space")
  func reusesSpace() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let s = dir + "/s"
    try UpcastKillTests.history(s, people: 1500)
    #expect(try ToolRunner.eventtool(["upcast", s] + Self.arguments).status == 0)
    let first = try CompactFixture.dataFile(s).count
    // The file reserve (zeros written ahead, up to 1.5 MiB) is the only growth allowed.
    let slack = 3 << 19
    for round in 0..<2 {
      #expect(try ToolRunner.eventtool(["rollback", s]).status == 0)
      if round == 1 {
        // Killed midway, then resumed.
        let p = try CompactFixture.start(["upcast", s, "--discard-newer"] + Self.arguments)
        usleep(150_000)
        kill(p.processIdentifier, SIGKILL)
        p.waitUntilExit()
      }
      let again = try ToolRunner.eventtool(["upcast", s, "--discard-newer"] + Self.arguments)
      #expect(again.status == 0, "\(again.err)")
      let size = try CompactFixture.dataFile(s).count
      #expect(size <= first + slack, "round \(round): \(size) bytes after the upcast, \(first) after the first")
    }
    #expect(try ToolRunner.eventtool(["verify", s]).status == 0)
  }
}
