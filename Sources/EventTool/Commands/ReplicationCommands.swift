import EventGraph
import EventGraphReplication
internal import EventGraphText
import Foundation
import NATSClient

/// The options every replication command shares.
enum ReplicationOptions {
  static let nats = OptionSpec(
    "nats", valueName: "URLS", help: "The NATS servers, comma-separated (nats://127.0.0.1:4222,…).", isRequired: true)
  static let json = OptionSpec("json", help: "Print one JSON object per line.")

  /// A JetStream context on the servers of `--nats`.
  static func connect(_ a: ParsedArguments, name: String) throws -> JetStream {
    guard let list = a.value("nats") else { throw ToolError.usage("missing --nats") }
    let urls = list.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    guard !urls.isEmpty else { throw ToolError.usage("--nats needs at least one URL") }
    for url in urls where !url.hasPrefix("nats://") && !url.hasPrefix("tls://") {
      throw ToolError.usage("--nats: '\(url)' is not a NATS URL (nats://HOST:PORT)")
    }
    do {
      return try JetStream(NATSConnection(urls: urls, name: name), timeout: 5)
    } catch {
      throw ToolError.failed("no NATS server answers at \(urls.joined(separator: ",")): \(error)")
    }
  }
}

/// `eventtool replicate`: ships a store's log to its stream.
struct ReplicateCommand: ToolCommand {
  let spec = CommandSpec(
    name: "replicate", abstract: "Ship a store's log to a NATS JetStream stream, as its primary.",
    discussion:
      "Creates the stream (three replicas, file storage) when it does not exist, then publishes every commit record not yet in it, byte for byte, a message per run of consecutive commits, each fenced by the stream's last sequence; model versions and version switches travel too. With --follow it keeps shipping what other processes commit until it is stopped; a killed shipper resumes where the stream ends. Another store promoted in its place fences it: it stops, marks the store fenced, and exits 1. With --quorum it prints a line for every commit the stream has stored on a majority: the acknowledgement a writer waiting for quorum reads (the Swift service's quorum mode waits by itself).",
    positionals: [PositionalSpec("STORE", help: "The primary store directory.")],
    options: [
      ReplicationOptions.nats,
      OptionSpec("stream", valueName: "NAME", help: "The stream's name (default: EG_ and the store's identity)."),
      OptionSpec("follow", help: "Keep shipping new commits until stopped."),
      OptionSpec("quorum", help: "Print each commit once the stream holds it."), ReplicationOptions.json,
    ],
    examples: ["eventtool replicate book.store --nats nats://127.0.0.1:4222 --follow"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"), writing: true)
    let js = try ReplicationOptions.connect(a, name: "eventtool replicate")
    let shipper = try Shipper(store: store, jetStream: js, stream: a.value("stream"), mode: .local)
    var reported: [Int: UInt64] = [:]
    func report() {
      let status = shipper.status
      for (version, last) in status.shipped.sorted(by: { $0.key < $1.key }) where last > (reported[version] ?? 0) {
        let first = (reported[version] ?? 0) + 1
        reported[version] = last
        if a.flag("quorum") {
          for n in first...last {
            line(io, a, [("version", .int(Int64(version))), ("commit", .int(Int64(n)))]) {
              "commit \(n) of v\(version) in stream \(status.stream)"
            }
          }
        } else {
          line(
            io, a,
            [
              ("version", .int(Int64(version))), ("first", .int(Int64(first))), ("last", .int(Int64(last))),
              ("streamSequence", .int(Int64(status.lastSequence))),
            ]
          ) {
            "shipped commits \(first)...\(last) of v\(version) (stream \(status.stream), sequence \(status.lastSequence))"
          }
        }
      }
    }
    for (version, last) in shipper.status.shipped { reported[version] = last }
    repeat {
      try shipper.shipPending()
      report()
      if a.flag("follow") { Thread.sleep(forTimeInterval: 0.005) }
    } while a.flag("follow")
    if !a.flag("json") {
      io.print("stream \(shipper.stream) holds the whole log (sequence \(shipper.status.lastSequence))")
    }
  }
}

/// `eventtool replica`: makes or updates a read replica from a stream.
struct ReplicaCommand: ToolCommand {
  let spec = CommandSpec(
    name: "replica", abstract: "Make or update a read replica of a store from its NATS JetStream stream.",
    discussion:
      "Creates STORE from the stream's genesis message when it does not exist (it keeps the primary's identity), then applies every message after its position: each commit record checked by its checksum and appended through the store's commit pipeline with the position in the same transaction, so a killed replica resumes where it stopped. Model versions and switches are applied as on the primary. The replica refuses local writes until `eventtool promote`. With --follow it keeps applying until stopped.",
    positionals: [PositionalSpec("STORE", help: "The replica's directory.")],
    options: [
      ReplicationOptions.nats,
      OptionSpec("stream", valueName: "NAME", help: "The stream to follow.", isRequired: true),
      OptionSpec("follow", help: "Keep applying new messages until stopped."), ReplicationOptions.json,
    ],
    examples: ["eventtool replica book.replica --nats nats://127.0.0.1:4222 --stream EG_1234 --follow"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    guard let stream = a.value("stream") else { throw ToolError.usage("missing --stream") }
    let js = try ReplicationOptions.connect(a, name: "eventtool replica")
    let replica: Replica
    if FileManager.default.fileExists(atPath: path + "/data.mdb") {
      replica = try Replica(store: try openStore(path, writing: true), jetStream: js, stream: stream)
    } else {
      replica = try Replica.create(at: path, jetStream: js, stream: stream)
      line(io, a, [("created", .string(path))]) { "created replica \(path) of stream \(stream)" }
    }
    let applied = try replica.catchUp()
    let position = try replica.position()
    line(io, a, [("applied", .int(Int64(applied))), ("streamSequence", .int(Int64(position)))]) {
      "applied \(applied) message(s); at stream sequence \(position)"
    }
    if a.flag("follow") { try replica.follow(until: { false }) }
  }
}

/// `eventtool promote`: makes a replica the primary.
struct PromoteCommand: ToolCommand {
  let spec = CommandSpec(
    name: "promote", abstract: "Make a read replica the primary of its stream.",
    discussion:
      "Applies everything the stream holds, then publishes a promote message fenced by the stream's last sequence, and makes the store the primary: it takes writes, and `eventtool replicate` (or the Swift shipper) ships them. The former primary's next publish is refused: it stops and marks itself fenced.",
    positionals: [PositionalSpec("STORE", help: "The replica's directory.")],
    options: [ReplicationOptions.nats, ReplicationOptions.json],
    examples: ["eventtool promote book.replica --nats nats://127.0.0.1:4222"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let store = try openStore(path, writing: true)
    guard let role = try store.replicationRole(), role.kind == .replica else {
      let now =
        try store.replicationRole()?.description ?? "not replicated"
      throw ToolError.failed("\(path) is \(now): only a read replica can be promoted")
    }
    let js = try ReplicationOptions.connect(a, name: "eventtool promote")
    let replica = try Replica(store: store, jetStream: js, stream: role.stream)
    try replica.promote()
    let position = try replica.position()
    line(
      io, a, [("promoted", .string(path)), ("stream", .string(role.stream)), ("streamSequence", .int(Int64(position)))]
    ) {
      "\(path) is now the primary of stream \(role.stream) (promoted at stream sequence \(position))"
    }
  }
}

/// Prints a line of text, or with `--json` the same fields as a JSON object.
private func line(_ io: ToolIO, _ a: ParsedArguments, _ fields: [(String, JSON)], text: () -> String) {
  if a.flag("json") {
    io.print(JSON.object(fields.map { JSONField($0.0, $0.1) }).serialized())
  } else {
    io.print(text())
  }
}
