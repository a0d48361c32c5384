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

  /// TLS and credentials for the NATS connection; secrets are read from files, never taken
  /// on the command line, where other users' `ps` shows them.
  static let security: [OptionSpec] = [
    OptionSpec("nats-tls", help: "Require TLS (implied by tls:// URLs and the other --nats-tls options)."),
    OptionSpec(
      "nats-tls-ca", valueName: "FILE",
      help: "The PEM file of the authorities the servers' certificates must chain to (default: the system's)."),
    OptionSpec(
      "nats-tls-cert", valueName: "FILE", help: "A client certificate (PEM), for servers that verify clients."),
    OptionSpec("nats-tls-key", valueName: "FILE", help: "The client certificate's private key (PEM)."),
    OptionSpec("nats-user", valueName: "NAME", help: "The user to connect as, with --nats-password-file."),
    OptionSpec("nats-password-file", valueName: "FILE", help: "A file holding the user's password."),
    OptionSpec("nats-token-file", valueName: "FILE", help: "A file holding a token the servers accept."),
    OptionSpec("nats-creds", valueName: "FILE", help: "A .creds file: a user JWT and its NKey seed."),
  ]

  static let streamKey = OptionSpec(
    "stream-key", valueName: "FILE",
    help:
      "The writers' key (eventtool keygen): every message published is tagged with it, and a replica applies only messages it verifies. Required when the stream has one."
  )

  /// The connection's security from the options of `a`.
  static func security(_ a: ParsedArguments) throws -> NATSSecurity {
    var security = NATSSecurity()
    security.tls = a.flag("nats-tls")
    security.caFile = a.value("nats-tls-ca")
    security.certificateFile = a.value("nats-tls-cert")
    security.keyFile = a.value("nats-tls-key")
    security.user = a.value("nats-user")
    security.password = try a.value("nats-password-file").map { try secret(in: $0, option: "nats-password-file") }
    security.token = try a.value("nats-token-file").map { try secret(in: $0, option: "nats-token-file") }
    security.credentialsFile = a.value("nats-creds")
    if let conflict = security.conflicts.first { throw ToolError.usage("the NATS options: \(conflict)") }
    return security
  }

  /// The first line of `file`, without its line break.
  private static func secret(in file: String, option: String) throws -> String {
    guard let data = FileManager.default.contents(atPath: file) else {
      throw ToolError.failed("--\(option): \(file) cannot be read")
    }
    let text = String(decoding: data, as: UTF8.self)
    let line = text.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
    let trimmed = line.hasSuffix("\r") ? String(line.dropLast()) : line
    guard !trimmed.isEmpty else { throw ToolError.failed("--\(option): \(file) is empty") }
    return trimmed
  }

  static let leaseTTL = OptionSpec(
    "lease-ttl", valueName: "SECONDS",
    help: "How long the primary's lease lives unrenewed (default 2; the primary and its candidates must agree).")
  static let advertise = OptionSpec(
    "advertise", valueName: "ADDRESS",
    help: "Where services reach this store once it is the primary, shown in the lease.")

  /// The lease options of `--lease-ttl` and `--advertise`.
  static func lease(_ a: ParsedArguments) throws -> LeaseOptions {
    var lease = LeaseOptions(address: a.value("advertise"))
    if let text = a.value("lease-ttl") {
      guard let ttl = Double(text), ttl >= 0.5, ttl <= 3600 else {
        throw ToolError.usage("--lease-ttl: '\(text)' is not a number of seconds from 0.5 to 3600")
      }
      lease.ttl = ttl
    }
    return lease
  }

  /// The writers' key of `--stream-key`, if given.
  static func key(_ a: ParsedArguments) throws -> StreamKey? {
    try a.value("stream-key").map { try StreamKey(file: $0) }
  }

  /// A JetStream context on the servers of `--nats`.
  static func connect(_ a: ParsedArguments, name: String) throws -> JetStream {
    guard let list = a.value("nats") else { throw ToolError.usage("missing --nats") }
    let urls = list.split(separator: ",").map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    guard !urls.isEmpty else { throw ToolError.usage("--nats needs at least one URL") }
    for url in urls where !url.hasPrefix("nats://") && !url.hasPrefix("tls://") {
      throw ToolError.usage("--nats: '\(url)' is not a NATS URL (nats://HOST:PORT)")
    }
    let security = try security(a)
    do {
      return try JetStream(NATSConnection(urls: urls, name: name, security: security), timeout: 5)
    } catch let error where error.isNoServer {
      throw ToolError.failed("no NATS server answers at \(urls.joined(separator: ",")): \(error)")
    } catch {
      throw ToolError.failed("cannot connect to NATS: \(error)")
    }
  }
}

/// `eventtool replicate`: ships a store's log to its stream.
struct ReplicateCommand: ToolCommand {
  let spec = CommandSpec(
    name: "replicate", abstract: "Ship a store's log to a NATS JetStream stream, as its primary.",
    discussion:
      "Creates the stream (three replicas, file storage) when it does not exist, then publishes every commit record not yet in it, byte for byte, a message per run of consecutive commits, each fenced by the stream's last sequence; model versions and version switches travel too. With --follow it keeps shipping what other processes commit until it is stopped; a killed shipper resumes where the stream ends. Another store promoted in its place fences it: it stops, marks the store fenced, and exits 1. With --quorum it prints a line for every commit the stream has stored on a majority: the acknowledgement a writer waiting for quorum reads (the Swift service's quorum mode waits by itself). With --follow it holds the stream's lease, renewed every third of --lease-ttl, so that candidates (`eventtool replica --candidate`) take over only once it stops. With --stream-key every message is tagged with the writers' key (a new stream records the key's fingerprint; a stream that has a key requires it); the --nats-tls and --nats-user options connect over TLS and log in (Docs/replication.md).",
    positionals: [PositionalSpec("STORE", help: "The primary store directory.")],
    options: [
      ReplicationOptions.nats,
      OptionSpec("stream", valueName: "NAME", help: "The stream's name (default: EG_ and the store's identity)."),
      OptionSpec("follow", help: "Keep shipping new commits until stopped."),
      OptionSpec("quorum", help: "Print each commit once the stream holds it."), ReplicationOptions.json,
      ReplicationOptions.streamKey, ReplicationOptions.leaseTTL, ReplicationOptions.advertise,
    ] + ReplicationOptions.security,
    examples: ["eventtool replicate book.store --nats nats://127.0.0.1:4222 --follow"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let store = try openStore(try a.required("STORE"), writing: true)
    let js = try ReplicationOptions.connect(a, name: "eventtool replicate")
    let lease = a.flag("follow") ? try ReplicationOptions.lease(a) : nil
    let shipper = try Shipper(
      store: store, jetStream: js, stream: a.value("stream"), mode: .local, key: try ReplicationOptions.key(a),
      lease: lease)
    defer { shipper.stop() }
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
      "Creates STORE from the stream's genesis message when it does not exist (it keeps the primary's identity), then applies every message after its position: each commit record checked by its checksum and appended through the store's commit pipeline with the position in the same transaction, so a killed replica resumes where it stopped. Model versions and switches are applied as on the primary. The replica refuses local writes until `eventtool promote`. With --follow it keeps applying until stopped. With --follow --candidate it is a candidate for primary: once the primary's lease lapses (the primary runs `eventtool replicate --follow`, or a Swift shipper with a lease), the candidates that have applied the whole stream race for the lease with a compare-and-set; the winner promotes itself, prints a line saying so, and ships its commits as `replicate --follow` does; the others go on following the new primary. A stream with a writers' key needs it (--stream-key): a message its key does not authenticate is refused, what came before it applied, and the command exits 1 naming its sequence.",
    positionals: [PositionalSpec("STORE", help: "The replica's directory.")],
    options: [
      ReplicationOptions.nats,
      OptionSpec("stream", valueName: "NAME", help: "The stream to follow.", isRequired: true),
      OptionSpec("follow", help: "Keep applying new messages until stopped."), ReplicationOptions.json,
      ReplicationOptions.streamKey,
      OptionSpec(
        "candidate",
        help:
          "With --follow: when the primary's lease lapses, race for it; the winner promotes itself and ships as the primary."
      ),
      ReplicationOptions.leaseTTL, ReplicationOptions.advertise,
    ] + ReplicationOptions.security,
    examples: ["eventtool replica book.replica --nats nats://127.0.0.1:4222 --stream EG_1234 --follow"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    guard let stream = a.value("stream") else { throw ToolError.usage("missing --stream") }
    if a.flag("candidate") && !a.flag("follow") { throw ToolError.usage("--candidate needs --follow") }
    let key = try ReplicationOptions.key(a)
    let js = try ReplicationOptions.connect(a, name: "eventtool replica")
    let replica: Replica
    if FileManager.default.fileExists(atPath: path + "/data.mdb") {
      replica = try Replica(store: try openStore(path, writing: true), jetStream: js, stream: stream, key: key)
    } else {
      replica = try Replica.create(at: path, jetStream: js, stream: stream, key: key)
      line(io, a, [("created", .string(path))]) { "created replica \(path) of stream \(stream)" }
    }
    let applied = try replica.catchUp()
    let position = try replica.position()
    line(io, a, [("applied", .int(Int64(applied))), ("streamSequence", .int(Int64(position)))]) {
      "applied \(applied) message(s); at stream sequence \(position)"
    }
    guard a.flag("follow") else { return }
    guard a.flag("candidate") else { return try replica.follow(until: { false }) }
    guard let shipper = try replica.runAsCandidate(lease: try ReplicationOptions.lease(a), until: { false }) else {
      return
    }
    let status = shipper.status
    line(
      io, a,
      [("promoted", .string(path)), ("stream", .string(stream)), ("streamSequence", .int(Int64(status.lastSequence)))]
    ) {
      "\(path) won the lease and is now the primary of stream \(stream) (promoted at stream sequence \(status.lastSequence))"
    }
    // Shipping runs on the shipper's thread until another member fences this one.
    while true {
      if let fenced = shipper.status.fenced { throw fenced }
      Thread.sleep(forTimeInterval: 0.05)
    }
  }
}

/// `eventtool promote`: makes a replica the primary.
struct PromoteCommand: ToolCommand {
  let spec = CommandSpec(
    name: "promote", abstract: "Make a read replica the primary of its stream.",
    discussion:
      "Applies everything the stream holds, then publishes a promote message fenced by the stream's last sequence, and makes the store the primary: it takes writes, and `eventtool replicate` (or the Swift shipper) ships them. The former primary's next publish is refused: it stops and marks itself fenced.",
    positionals: [PositionalSpec("STORE", help: "The replica's directory.")],
    options: [ReplicationOptions.nats, ReplicationOptions.json, ReplicationOptions.streamKey]
      + ReplicationOptions.security,
    examples: ["eventtool promote book.replica --nats nats://127.0.0.1:4222"])

  func run(_ a: ParsedArguments, _ io: ToolIO) throws {
    let path = try a.required("STORE")
    let store = try openStore(path, writing: true)
    guard let role = try store.replicationRole(), role.kind == .replica else {
      let now =
        try store.replicationRole()?.description ?? "not replicated"
      throw ToolError.failed("\(path) is \(now): only a read replica can be promoted")
    }
    let key = try ReplicationOptions.key(a)
    let js = try ReplicationOptions.connect(a, name: "eventtool promote")
    let replica = try Replica(store: store, jetStream: js, stream: role.stream, key: key)
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
