import Foundation
import Testing

/// `eventtool stats STORE --prometheus`, the text node_exporter's textfile collector reads.
@Suite("eventtool stats --prometheus")
struct StatsPrometheusTests {
  @Test("the store's figures in Prometheus' format: promtool accepts them, and they are the store's")
  func exposition() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = dir + "/book"
    #expect(try ToolRunner.eventtool(["init", store, "--model", examples + "/AddressBook.v1.model.json"]).status == 0)
    let lines = (0..<4).map {
      #"{"id": "p\#($0)", "entity": "AddressBook", "attributes": {"firstName": "F", "lastName": "L\#($0)"}}"#
    }
    let file = dir + "/people.jsonl"
    try (lines.joined(separator: "\n") + "\n").write(toFile: file, atomically: true, encoding: .utf8)
    #expect(try ToolRunner.eventtool(["import", store, file, "--batch", "1"]).status == 0)
    let r = try ToolRunner.eventtool(["stats", store, "--prometheus"])
    #expect(r.status == 0, "\(r.err)")
    let checked = try ToolRunner.runSystem("/usr/bin/promtool", ["check", "metrics"], input: r.out)
    #expect(checked.status == 0 && checked.out.isEmpty && checked.err.isEmpty, "\(checked.out)\(checked.err)")
    let stats = try ToolRunner.eventtool(["stats", store, "--json"])
    let json = try #require(try JSONSerialization.jsonObject(with: Data(stats.out.utf8)) as? [String: Any])
    #expect(r.out.contains("\neventgraph_log_commits \(json["commits"] as? Int ?? -1)\n"))
    #expect(r.out.contains("\neventgraph_log_events \(json["events"] as? Int ?? -1)\n"))
    // A program that only looks at the store counts no commits of its own.
    #expect(!r.out.contains("eventgraph_commits_total"))
    let both = try ToolRunner.eventtool(["stats", store, "--prometheus", "--json"])
    #expect(both.status == 2 && both.err.contains("--prometheus and --json are two formats"))
  }
}
