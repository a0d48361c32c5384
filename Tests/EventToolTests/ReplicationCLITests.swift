import EventGraph
import Foundation
import TestSupport
import Testing

@Suite("Replication from the command line", .serialized)
final class ReplicationCLITests {
  let cluster: NATSCluster
  let dir: String

  init() throws {
    cluster = try NATSCluster()
    dir = temporaryDirectory("replicationcli")
  }

  deinit { removeDirectory(dir) }

  func run(_ arguments: [String]) throws -> ToolRunner.Result { try ToolRunner.eventtool(arguments) }

  /// What must agree between a primary and its replica: verify's report, the log as JSON
  /// (every version's), the export and the active version.
  func fingerprint(_ store: String) throws -> [String] {
    let stats = try run(["stats", store, "--json"]).out
    let version = stats.split(separator: ",").first { $0.contains("\"version\"") }.map(String.init) ?? ""
    return [
      try run(["verify", store]).out, try run(["log", store, "--json"]).out, try run(["export", store]).out, version,
    ]
  }

  @Test("an upcast and a rollback on the primary reach the replica: same logs, projections and version")
  func versionSwitchesTravel() throws {
    let primary = dir + "/book", replica = dir + "/replica"
    #expect(try run(["init", primary, "--model", examples + "/AddressBook.v1.model.json"]).status == 0)
    let people = (0..<40).map {
      #"{"id":"p\#($0)","entity":"AddressBook","attributes":{"firstName":"f\#($0)","lastName":"l\#($0)","phone1":"03-\#($0)"}}"#
    }
    try people.joined(separator: "\n").write(toFile: dir + "/people.jsonl", atomically: true, encoding: .utf8)
    #expect(try run(["import", primary, dir + "/people.jsonl", "--batch", "10"]).status == 0)
    let stream = "CLI"
    let shipped = try run(["replicate", primary] + cluster.arguments + ["--stream", stream])
    #expect(shipped.status == 0, "\(shipped.err)")
    #expect(try run(["replica", replica] + cluster.arguments + ["--stream", stream]).status == 0)
    #expect(try fingerprint(replica) == fingerprint(primary))

    let upcast = try run([
      "upcast", primary, "--model", examples + "/AddressBook.v2.model.json", "--mapping",
      examples + "/AddressBook.v1-v2.mapping.json",
    ])
    #expect(upcast.status == 0, "\(upcast.err)")
    #expect(try run(["replicate", primary] + cluster.arguments + ["--stream", stream]).status == 0)
    #expect(try run(["replica", replica] + cluster.arguments + ["--stream", stream]).status == 0)
    #expect(try fingerprint(replica) == fingerprint(primary))
    #expect(try run(["stats", replica]).out.contains("AddressBook v2"))

    #expect(try run(["rollback", primary]).status == 0)
    #expect(try run(["replicate", primary] + cluster.arguments + ["--stream", stream]).status == 0)
    #expect(try run(["replica", replica] + cluster.arguments + ["--stream", stream]).status == 0)
    #expect(try fingerprint(replica) == fingerprint(primary))
    #expect(try run(["stats", replica]).out.contains("role     replica of stream CLI"))
    #expect(try run(["stats", replica] + cluster.arguments).out.contains("lag      0 message(s) behind"))
    // A commit the primary has not shipped yet shows as its lag.
    try #"{"commit":"late","type":"insert","object":"$x","entity":"AddressBook"}"#.appending("\n")
      .appending(#"{"commit":"late","type":"set","object":"$x","key":"firstName","value":"x"}"#).appending("\n")
      .appending(#"{"commit":"late","type":"set","object":"$x","key":"lastName","value":"y"}"#)
      .write(toFile: dir + "/late.jsonl", atomically: true, encoding: .utf8)
    let appended = try run(["append", primary, dir + "/late.jsonl"])
    #expect(appended.status == 0, "\(appended.err)")
    #expect(try run(["stats", primary] + cluster.arguments).out.contains("lag      1 commit(s) not yet shipped"))
    // The report's summary says the same.
    let page = dir + "/primary.html"
    let report = try run(["report", primary, "--out", page] + cluster.arguments)
    #expect(report.status == 0, "\(report.err)")
    let html = (try? String(contentsOfFile: page, encoding: .utf8)) ?? ""
    #expect(html.contains("Replication lag") && html.contains("1 commit(s) not yet shipped"))
  }

  @Test("bad input: no server at the URL, a replica written to, promote of a primary, a stream of another store")
  func badInput() throws {
    let primary = dir + "/bad", other = dir + "/other"
    #expect(try run(["init", primary, "--model", examples + "/AddressBook.v1.model.json"]).status == 0)
    #expect(try run(["init", other, "--model", examples + "/AddressBook.v1.model.json"]).status == 0)
    let before = try Data(contentsOf: URL(fileURLWithPath: primary + "/data.mdb"))
    let noServer = try run(["replicate", primary, "--nats", "nats://127.0.0.1:1"])
    #expect(noServer.status == 1)
    #expect(noServer.err.contains("no NATS server answers at nats://127.0.0.1:1"))
    #expect(try Data(contentsOf: URL(fileURLWithPath: primary + "/data.mdb")) == before)
    let notURL = try run(["replicate", primary, "--nats", "localhost:4222"])
    #expect(notURL.status == 2)
    #expect(notURL.err.contains("'localhost:4222' is not a NATS URL"))

    #expect(try run(["replicate", primary] + cluster.arguments + ["--stream", "BAD"]).status == 0)
    let foreign = try run(["replicate", other] + cluster.arguments + ["--stream", "BAD"])
    #expect(foreign.status == 1)
    #expect(foreign.err.contains("stream 'BAD'") && foreign.err.contains("belongs to store"))

    #expect(try run(["replica", dir + "/r"] + cluster.arguments + ["--stream", "BAD"]).status == 0)
    try #"{"commit":"x","entity":"AddressBook","firstName":"a","lastName":"b"}"#.write(
      toFile: dir + "/one.jsonl", atomically: true, encoding: .utf8)
    let written = try run(["append", dir + "/r", dir + "/one.jsonl"])
    #expect(written.status == 1)
    #expect(written.err.contains("is a read replica of stream 'BAD'"))
    let promotePrimary = try run(["promote", primary] + cluster.arguments)
    #expect(promotePrimary.status == 1)
    #expect(promotePrimary.err.contains("only a read replica can be promoted"))
    let missing = try run(["replica", dir + "/r2"] + cluster.arguments + ["--stream", "NOSUCH"])
    #expect(missing.status == 1)
    #expect(missing.err.contains("stream 'NOSUCH'"))
    #expect(!FileManager.default.fileExists(atPath: dir + "/r2"))
  }
}
