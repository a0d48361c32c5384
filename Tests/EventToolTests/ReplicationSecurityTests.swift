import EventGraph
import Foundation
import NATSClient
import Testing

@testable import EventGraphReplication

/// Who may reach the cluster (TLS, credentials) and who may write the stream (the writers'
/// key), on the suite's cluster, which runs with TLS and a user.
extension ReplicationTests {
  func keyFile(_ name: String) throws -> String {
    let path = dir + "/" + name + ".key"
    try EventStore.generateKeyFile(at: path)
    return path
  }

  func connect(_ security: NATSSecurity, urls: [String]? = nil) throws(NATSError) -> NATSConnection {
    try NATSConnection(urls: urls ?? cluster.urlList, name: "security test", security: security, timeout: 2)
  }

  @Test(
    "the cluster's TLS and user are required: no CA, a wrong password, no credentials, plain text are refused with the reason"
  )
  func connectionSecurity() throws {
    #expect(try connect(cluster.security).maxPayload > 0)
    var noCA = cluster.security
    noCA.caFile = nil
    let untrusted = #expect(throws: NATSError.self) { try connect(noCA) }
    #expect(untrusted?.detail.contains("SSL handshake error") == true, "\(String(describing: untrusted))")
    #expect(untrusted?.detail.contains("(conn.c:") == false, "nats.c's source position stays out of the message")
    var wrong = cluster.security
    wrong.password = "not the password"
    let refused = #expect(throws: NATSError.self) { try connect(wrong) }
    #expect(refused?.detail.contains("Authorization Violation") == true, "\(String(describing: refused))")
    var anonymous = cluster.security
    anonymous.user = nil
    anonymous.password = nil
    #expect(throws: NATSError.self) { try connect(anonymous) }
    // A nats:// URL to a server that requires TLS is upgraded only when the client asks.
    let plain = cluster.urlList.map { $0.replacingOccurrences(of: "tls://", with: "nats://") }
    var withoutTLS = cluster.security
    withoutTLS.caFile = nil
    #expect(throws: NATSError.self) { try connect(withoutTLS, urls: plain) }
    #expect(try connect(cluster.security, urls: plain).maxPayload > 0)
    // Settings that do not fit are named before any server is asked.
    var half = NATSSecurity()
    half.user = "eventgraph"
    let conflict = #expect(throws: NATSError.self) { try connect(half) }
    #expect(conflict?.detail.contains("a user needs a password") == true)
    var creds = NATSSecurity()
    creds.credentialsFile = dir + "/missing.creds"
    let missing = #expect(throws: NATSError.self) { try connect(creds) }
    #expect(missing?.detail.contains("missing.creds cannot be read") == true)
  }

  /// A one-node server (no JetStream) run with `arguments` on a free port, and its URL;
  /// stopped by `stop`.
  func singleServer(_ name: String, _ arguments: [String]) throws -> (url: String, stop: () -> Void) {
    let root = URL(fileURLWithPath: NATSCluster.script).deletingLastPathComponent().deletingLastPathComponent()
    let server = Process()
    server.executableURL = root.appendingPathComponent(".tools/nats/bin/nats-server")
    let ports = dir + "/" + name + "-ports"
    try FileManager.default.createDirectory(atPath: ports, withIntermediateDirectories: true)
    server.arguments = ["-a", "127.0.0.1", "-p", "-1", "--ports_file_dir", ports] + arguments
    server.standardOutput = FileHandle.nullDevice
    server.standardError = FileHandle.nullDevice
    try server.run()
    let stop = {
      server.terminate()
      server.waitUntilExit()
    }
    let file = ports + "/nats-server_\(server.processIdentifier).ports"
    for _ in 0..<200 {
      if let data = FileManager.default.contents(atPath: file),
        let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
        let url = (object["nats"] as? [String])?.first
      {
        return (url, stop)
      }
      Thread.sleep(forTimeInterval: 0.05)
    }
    stop()
    throw NATSCluster.ClusterError(message: "nats-server \(arguments) wrote no ports file")
  }

  @Test(
    "a server that verifies clients (mutual TLS): the client certificate connects; none is refused; a missing key file is named"
  )
  func clientCertificates() throws {
    let tls = cluster.directory + "/tls"
    let config = dir + "/mtls.conf"
    try """
    tls {
      cert_file: "\(tls)/server.pem"
      key_file: "\(tls)/server-key.pem"
      ca_file: "\(tls)/ca.pem"
      verify: true
    }
    """.write(toFile: config, atomically: true, encoding: .utf8)
    let (address, stop) = try singleServer("mtls", ["-c", config])
    defer { stop() }
    var withCertificate = NATSSecurity()
    withCertificate.caFile = tls + "/ca.pem"
    withCertificate.certificateFile = tls + "/client.pem"
    withCertificate.keyFile = tls + "/client-key.pem"
    #expect(try connect(withCertificate, urls: [address]).maxPayload > 0)
    var without = withCertificate
    without.certificateFile = nil
    without.keyFile = nil
    #expect(throws: NATSError.self) { try connect(without, urls: [address]) }
    var missingKey = withCertificate
    missingKey.keyFile = dir + "/nowhere-key.pem"
    let unreadable = #expect(throws: NATSError.self) { try connect(missingKey, urls: [address]) }
    #expect(unreadable?.detail.contains("nowhere-key.pem") == true, "\(String(describing: unreadable))")
    let store = dir + "/mtls-store"
    _ = try EventStore.create(at: store, model: model())
    let tool = try ToolRunner.eventtool(
      [
        "stats", store, "--nats", address, "--nats-tls-ca", tls + "/ca.pem", "--nats-tls-cert", tls + "/client.pem",
        "--nats-tls-key", tls + "/client-key.pem",
      ])
    #expect(tool.status == 0, "\(tool.err)")
    let half = try ToolRunner.eventtool(["stats", store, "--nats", address, "--nats-tls-cert", tls + "/client.pem"])
    #expect(half.status == 2)
    #expect(half.err.contains("both its certificate file and its key file"), "\(half.err)")
  }

  @Test("a server that takes a token: the token file connects, another token is refused")
  func tokenServer() throws {
    let (address, stop) = try singleServer("token", ["--auth", "s3cret-token"])
    defer { stop() }
    var good = NATSSecurity()
    good.token = "s3cret-token"
    #expect(try connect(good, urls: [address]).maxPayload > 0)
    var bad = NATSSecurity()
    bad.token = "guessed"
    #expect(throws: NATSError.self) { try connect(bad, urls: [address]) }
    #expect(throws: NATSError.self) { try connect(NATSSecurity(), urls: [address]) }
    // eventtool reads the token from a file, never from the command line (`stats --nats`
    // connects before it asks anything).
    try "s3cret-token\n".write(toFile: dir + "/token", atomically: true, encoding: .utf8)
    try "guessed\n".write(toFile: dir + "/guessed-token", atomically: true, encoding: .utf8)
    let store = dir + "/token-store"
    _ = try EventStore.create(at: store, model: model())
    let connected = try ToolRunner.eventtool(["stats", store, "--nats", address, "--nats-token-file", dir + "/token"])
    #expect(connected.status == 0, "\(connected.err)")
    let guessed = try ToolRunner.eventtool(
      ["stats", store, "--nats", address, "--nats-token-file", dir + "/guessed-token"])
    #expect(guessed.status == 1)
    #expect(guessed.err.contains("Authorization Violation"), "\(guessed.err)")
    let empty = dir + "/empty-token"
    try "".write(toFile: empty, atomically: true, encoding: .utf8)
    let refused = try ToolRunner.eventtool(["stats", store, "--nats", address, "--nats-token-file", empty])
    #expect(refused.status == 1)
    #expect(refused.err.contains("--nats-token-file: \(empty) is empty"), "\(refused.err)")
  }

  @Test(
    "a stream with a writers' key: a replica with the key follows it; a missing key, another key, or a key on a keyless stream is refused, naming the keys"
  )
  func writersKey() throws {
    let js = try cluster.jetStream()
    let key = try StreamKey(file: try keyFile("writers"))
    let other = try StreamKey(file: try keyFile("other"))
    #expect(key.fingerprint != other.fingerprint)
    let primary = try EventStore.create(at: dir + "/keyed", model: model())
    for i in 0..<5 { try primary.write { tx in _ = try tx.insert("Note", ["text": .string("note \(i)")]) } }
    try Shipper(store: primary, jetStream: js, stream: "KEYED", key: key).shipPending()
    let last = try #require(try js.streamInfo("KEYED")?.lastSequence)
    for n in 1...last {
      let message = try #require(try js.message(stream: "KEYED", sequence: n))
      #expect(key.verifies(message), "message \(n) carries the key's tag")
      #expect(!other.verifies(message))
    }
    #expect(try js.message(stream: "KEYED", sequence: 1)?.headers["EG-Key"] == key.fingerprint)
    let replica = try Replica.create(at: dir + "/keyed-r", jetStream: js, stream: "KEYED", key: key)
    try replica.catchUp()
    #expect(try records(replica.store) == records(primary))

    let noKey = #expect(throws: ReplicationError.self) {
      try Replica.create(at: dir + "/keyed-nokey", jetStream: js, stream: "KEYED")
    }
    #expect(noKey?.code == .streamKey)
    #expect(noKey?.description.contains(key.fingerprint) == true)
    #expect(!FileManager.default.fileExists(atPath: dir + "/keyed-nokey"))
    let wrong = #expect(throws: ReplicationError.self) {
      try Replica.create(at: dir + "/keyed-wrong", jetStream: js, stream: "KEYED", key: other)
    }
    #expect(wrong?.code == .streamKey)
    #expect(wrong?.description.contains(other.fingerprint) == true)
    let keylessShipper = #expect(throws: ReplicationError.self) {
      try Shipper(store: primary, jetStream: js, stream: "KEYED")
    }
    #expect(keylessShipper?.code == .streamKey)
    #expect(throws: ReplicationError.self) { try Replica(store: replica.store, jetStream: js, stream: "KEYED") }

    let plain = try EventStore.create(at: dir + "/plain", model: model())
    try plain.write { tx in _ = try tx.insert("Note", ["text": .string("plain")]) }
    try Shipper(store: plain, jetStream: js, stream: "PLAIN").shipPending()
    let keyOnPlain = #expect(throws: ReplicationError.self) {
      try Shipper(store: plain, jetStream: js, stream: "PLAIN", key: key)
    }
    #expect(keyOnPlain?.code == .streamKey)
    #expect(keyOnPlain?.description.contains("made without a writers' key") == true)
    #expect(throws: ReplicationError.self) {
      try Replica.create(at: dir + "/plain-r", jetStream: js, stream: "PLAIN", key: key)
    }
    let unreadable = #expect(throws: ReplicationError.self) { try StreamKey(file: dir + "/nowhere.key") }
    #expect(unreadable?.code == .streamKey)
    #expect(unreadable?.description.contains("nowhere.key") == true)
  }

  /// A primary with a writers' key, `commits` commits shipped to `stream`, its replica
  /// caught up, and the shipper.
  func keyedStream(_ stream: String, key: StreamKey, commits: Int = 4) throws -> (EventStore, Replica) {
    let js = try cluster.jetStream()
    let primary = try EventStore.create(at: dir + "/" + stream, model: model())
    for i in 0..<commits { try primary.write { tx in _ = try tx.insert("Note", ["text": .string("n\(i)")]) } }
    try Shipper(store: primary, jetStream: js, stream: stream, key: key).shipPending()
    let replica = try Replica.create(at: dir + "/" + stream + "-r", jetStream: js, stream: stream, key: key)
    try replica.catchUp()
    return (primary, replica)
  }

  @Test(
    "a message without the writers' tag — none, another key's, a writer's message altered, a promote — is refused with what came before applied, and fences no one"
  )
  func forgedMessages() throws {
    let js = try cluster.jetStream()
    let key = try StreamKey(file: try keyFile("forge-writers"))
    let intruder = try StreamKey(file: try keyFile("intruder"))
    enum Forgery: CaseIterable { case untagged, otherKey, altered, promote }
    for (n, forgery) in Forgery.allCases.enumerated() {
      let stream = "FORGE\(n)"
      let (primary, replica) = try keyedStream(stream, key: key)
      let before = try records(replica.store)
      // The next commit, made on the primary and not shipped: a valid record, which only
      // the tag tells from the primary's own.
      try primary.write { tx in _ = try tx.insert("Note", ["text": .string("forged")]) }
      let record = try primary.commitRecords(from: 5)[0]
      let last = try #require(try js.streamInfo(stream)?.lastSequence)
      var message = OutgoingMessage(
        subject: "eg.\(stream).v1.commits", id: "\(primary.storeID):v1:c5",
        headers: [
          "EG-Kind": "commits", "EG-Store": primary.storeID, "EG-Member": "intruder", "EG-Version": "1",
          "EG-First": "5", "EG-Last": "5",
        ], data: StreamLayout.pack([record]))
      switch forgery {
      case .untagged: break
      case .otherKey: intruder.sign(&message)
      case .altered:
        // A writer's own message, tagged by the key, with its data changed.
        key.sign(&message)
        message.data[message.data.count - 1] ^= 0x01
      case .promote:
        message = OutgoingMessage(
          subject: "eg.\(stream).promote", id: "\(primary.storeID):promote:\(last + 1)",
          headers: ["EG-Kind": "promote", "EG-Store": primary.storeID, "EG-Member": "intruder"], data: [])
      }
      _ = try js.publish(message, expectLastSequence: last)
      let refused = #expect(throws: ReplicationError.self, "\(forgery)") { try replica.catchUp() }
      #expect(refused?.code == .unauthenticated, "\(forgery)")
      #expect(refused?.sequence == last + 1, "\(forgery)")
      #expect(refused?.description.contains("intruder") == true, "\(forgery): \(String(describing: refused))")
      #expect(try replica.position() == last, "\(forgery): nothing of the forged message applied")
      #expect(try records(replica.store) == before, "\(forgery)")
      #expect(try replica.store.replicationRole()?.kind == .replica, "\(forgery): nothing promoted")
      // The primary's next publish meets the forgery: refused and reported, not a fence.
      let shipper = #expect(throws: ReplicationError.self, "\(forgery)") {
        try Shipper(store: primary, jetStream: js, stream: stream, key: key).shipPending()
      }
      #expect(shipper?.code == .unauthenticated, "\(forgery)")
      #expect(try primary.replicationRole()?.kind == .primary, "\(forgery): the primary is not fenced")
    }
  }

  @Test(
    "eventtool replicate, replica and promote with --stream-key over TLS; a replica without the key exits 1 naming it")
  func writersKeyCLI() throws {
    let store = dir + "/cli-keyed"
    let key = try keyFile("cli-writers")
    #expect(
      try ToolRunner.eventtool(["init", store, "--model", Self.examples + "/AddressBook.v1.model.json"]).status == 0)
    let shipped = try ToolRunner.eventtool(
      ["replicate", store] + cluster.arguments + ["--stream", "CLIKEY", "--stream-key", key])
    #expect(shipped.status == 0, "\(shipped.err)")
    let made = try ToolRunner.eventtool(
      ["replica", dir + "/cli-keyed-r"] + cluster.arguments + ["--stream", "CLIKEY", "--stream-key", key])
    #expect(made.status == 0, "\(made.err)")
    let fingerprint = try StreamKey(file: key).fingerprint
    let keyless = try ToolRunner.eventtool(
      ["replica", dir + "/cli-keyless"] + cluster.arguments + ["--stream", "CLIKEY"])
    #expect(keyless.status == 1)
    #expect(keyless.err.contains("authenticated by the writers' key \(fingerprint)"), "\(keyless.err)")
    let promoted = try ToolRunner.eventtool(["promote", dir + "/cli-keyed-r", "--stream-key", key] + cluster.arguments)
    #expect(promoted.status == 0, "\(promoted.err)")
    let badPassword = dir + "/bad-password"
    try "wrong\n".write(toFile: badPassword, atomically: true, encoding: .utf8)
    var arguments = cluster.arguments
    arguments[arguments.count - 1] = badPassword
    let refused = try ToolRunner.eventtool(["replicate", store] + arguments + ["--stream-key", key])
    #expect(refused.status == 1)
    #expect(
      refused.err.contains("cannot connect to NATS") && refused.err.contains("Authorization Violation"),
      "\(refused.err)")
  }

  static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Docs/examples").path
}
