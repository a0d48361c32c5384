import Foundation
import Testing

@Suite("eventtool clone and snapshot")
struct CloneCommandTests {
  static let company = """
    {"id": "acme", "entity": "Company", "attributes": {"name": "ACME"}, "relationships": {"employees": ["e1", "e2"], "departments": ["d1"]}}
    {"id": "e1", "entity": "Employee", "attributes": {"name": "Ann"}, "relationships": {"department": "d1"}}
    {"id": "e2", "entity": "Employee", "attributes": {"name": "Bob"}, "relationships": {"manager": "e1"}}
    {"id": "d1", "entity": "Department", "attributes": {"name": "R&D"}}
    """

  static func store(_ dir: String) throws -> String {
    let path = dir + "/s"
    #expect(try ToolRunner.eventtool(["init", path, "--model", examples + "/Company.model.json"]).status == 0)
    #expect(try ToolRunner.eventtool(["import", path, "-"], input: company).status == 0)
    return path
  }

  @Test("clone prints the new root and, with --json, the identity map; the original is unchanged")
  func clone() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = try Self.store(dir)
    let before = try ToolRunner.eventtool(["export", path]).out
    let r = try ToolRunner.eventtool(["clone", path, "Company/1", "--set", "Company.name=concat(name, ' 2')", "--json"])
    #expect(r.status == 0, "\(r.err)")
    #expect(r.out.contains(#""root": "Company/5""#))
    #expect(r.out.contains(#""Employee/2": "Employee/6""#))
    let after = try ToolRunner.eventtool(["export", path]).out
    // The original lines are the same, except the shared department now lists the copy too.
    let kept = before.split(separator: "\n").filter { !$0.contains("Department/4") }
    for line in kept { #expect(after.contains(line)) }
    #expect(after.contains(#""name": "ACME 2""#))
    let plain = try ToolRunner.eventtool(["clone", path, "Company/1", "--skip", "departments,department"])
    #expect(plain.out == "Company/8\n")
  }

  @Test(
    "bad input: each a clear error, nothing written",
    arguments: [
      (["Company/99"], "no object"),
      (["Company/1", "--deep", "employes"], "employes"),
      (["Company/1", "--at", "9999"], "beyond"),
      (["Company/1", "--set", "name"], "ATTR=EXPR"),
      (["Company/1", "--set", "name=concat(("], "expected"),
    ])
  func badInput(_ extra: [String], _ message: String) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = try Self.store(dir)
    let before = try ToolRunner.eventtool(["log", path, "--json"]).out
    let r = try ToolRunner.eventtool(["clone", path] + extra)
    #expect(r.status != 0)
    #expect(r.err.contains(message), "\(r.err)")
    #expect(try ToolRunner.eventtool(["log", path, "--json"]).out == before)
  }

  @Test("snapshot writes a standalone store, refuses an existing directory, and keeps history when asked")
  func snapshot() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let path = try Self.store(dir)
    let whole = try ToolRunner.eventtool(["snapshot", path, "--out", dir + "/copy"])
    #expect(whole.status == 0, "\(whole.err)")
    #expect(
      try ToolRunner.eventtool(["export", dir + "/copy"]).out == (try ToolRunner.eventtool(["export", path]).out))
    let again = try ToolRunner.eventtool(["snapshot", path, "--out", dir + "/copy"])
    #expect(again.status == 1)
    #expect(again.err.contains("already"))
    let sub = try ToolRunner.eventtool([
      "snapshot", path, "--out", dir + "/sub", "--root", "Employee/3", "--with-history",
    ])
    #expect(sub.status == 0, "\(sub.err)")
    #expect(try ToolRunner.eventtool(["verify", dir + "/sub"]).status == 0)
  }
}
