import Foundation
import Testing

/// `--at` and `--at-commit`: commands show only states that some commit left.
@Suite("eventtool time travel goes from commit to commit")
struct TimeTravelCLITests {
  /// A store of two commits: AddressBook/1 at events 1...3, AddressBook/2 at 4...6.
  static func twoCommits(_ dir: String) throws -> String {
    let store = dir + "/s"
    #expect(try ToolRunner.eventtool(["init", store, "--model", examples + "/AddressBook.v1.model.json"]).status == 0)
    let people = """
      {"id": "a", "entity": "AddressBook", "attributes": {"firstName": "A", "lastName": "B"}}
      {"id": "b", "entity": "AddressBook", "attributes": {"firstName": "C", "lastName": "D"}}
      """
    let r = try ToolRunner.eventtool(["import", store, "-", "--batch", "1"], input: people)
    #expect(r.out.contains("(sequences 1...3, 4...6)"), "\(r.out)")
    return store
  }

  @Test("--at-commit N is the state after commit N, the same as --at its last event")
  func atCommit() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Self.twoCommits(dir)
    for (commit, last, objects) in [(0, 0, 0), (1, 3, 1), (2, 6, 2)] {
      let byCommit = try ToolRunner.eventtool(["export", store, "--at-commit", "\(commit)"])
      let byEvent = try ToolRunner.eventtool(["export", store, "--at", "\(last)"])
      #expect(byCommit.status == 0 && byEvent.status == 0, "\(byCommit.err) \(byEvent.err)")
      #expect(byCommit.out == byEvent.out)
      #expect(byCommit.out.split(separator: "\n").count == objects)
    }
    let shown = try ToolRunner.eventtool(["show", store, "AddressBook/1", "--at-commit", "1", "--json"])
    #expect(shown.out.contains(#""lastName": "B""#), "\(shown.out)")
    let before = try ToolRunner.eventtool(["show", store, "AddressBook/2", "--at-commit", "1"])
    #expect(before.status == 1 && before.err.contains("did not exist"), "\(before.err)")
  }

  @Test(
    "--at inside a commit is refused, naming the commit and both its ends",
    arguments: [("show", 1), ("show", 2), ("export", 4), ("export", 5)])
  func insideCommit(_ command: String, _ sequence: Int) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = try Self.twoCommits(dir)
    let arguments = command == "show" ? ["show", store, "AddressBook/1"] : ["export", store]
    let r = try ToolRunner.eventtool(arguments + ["--at", "\(sequence)"])
    #expect(r.status == 1)
    #expect(r.out.isEmpty, "a state inside a commit was shown: \(r.out)")
    let (c, first, last) = sequence <= 3 ? (1, 1, 3) : (2, 4, 6)
    #expect(
      r.err.contains(
        "--at \(sequence): event \(sequence) is inside commit \(c) (events \(first)...\(last)): no state there was ever committed; for the state after commit \(c) give --at-commit \(c) (or --at \(last)), before it --at-commit \(c - 1) (or --at \(first - 1))"
      ), "\(r.err)")
  }
}
