internal import CNATS
import Foundation

/// A connection to a NATS server or cluster.
///
/// nats.c's connection is safe to use from any thread; its calls block, so keep them off
/// Swift's cooperative pool (a thread of one's own, as the replication shipper has).
public final class NATSConnection: @unchecked Sendable {
  // Safety of @unchecked Sendable: nats.c locks its connection internally, and the pointer
  // is set once in init and freed once in deinit.
  let pointer: OpaquePointer
  /// The URLs it was asked to connect to.
  public let urls: [String]

  /// Connects to the first server of `urls` that answers; later it reconnects by itself
  /// to any of them, without limit, every `reconnectWait` seconds.
  ///
  /// It pings its server every `pingInterval` seconds and drops the connection when two
  /// pings go unanswered, then reconnects to another server: a connection cut by a network
  /// partition goes silent, with no reset, and nats.c's default (a ping every two minutes)
  /// would hold a dead one for minutes — long enough for a primary's lease to lapse while
  /// two other servers could have renewed it.
  ///
  /// - Parameter security: TLS and credentials (``NATSSecurity``); none by default.
  /// - Throws: ``NATSError`` when no server answers within `timeout` seconds, when a file of
  ///   `security` cannot be read, when the TLS handshake fails (a server's certificate that
  ///   does not chain to the CA) or when the servers refuse the credentials.
  public init(
    urls: [String], name: String, security: NATSSecurity = .init(), timeout: Double = 2, reconnectWait: Double = 0.1,
    pingInterval: Double = 1
  ) throws(NATSError) {
    self.urls = urls
    if let conflict = security.conflicts.first {
      throw NATSError(NATS_INVALID_ARG, doing: "the connection's security: \(conflict)", fromNATS: false)
    }
    var options: OpaquePointer?
    try check(natsOptions_Create(&options), doing: "creating NATS options")
    guard let options else { throw NATSError(NATS_NO_MEMORY, doing: "creating NATS options") }
    defer { natsOptions_Destroy(options) }
    // The servers' C strings live until the options copy them (inside this call).
    let copies = urls.map { strdup($0) }
    defer { copies.forEach { free($0) } }
    var servers: [UnsafePointer<CChar>?] = copies.map { UnsafePointer($0) }
    try check(
      natsOptions_SetServers(options, &servers, Int32(servers.count)),
      doing: "the server list \(urls.joined(separator: ","))")
    try check(natsOptions_SetName(options, name), doing: "naming the connection")
    try check(natsOptions_SetTimeout(options, Int64(timeout * 1000)), doing: "setting the timeout")
    try check(natsOptions_SetMaxReconnect(options, -1), doing: "setting reconnects")
    try check(natsOptions_SetReconnectWait(options, Int64(reconnectWait * 1000)), doing: "setting reconnects")
    try check(natsOptions_SetPingInterval(options, Int64(pingInterval * 1000)), doing: "setting the ping interval")
    try check(natsOptions_SetMaxPingsOut(options, 2), doing: "setting the pings out")
    try Self.apply(security, to: options)
    var connection: OpaquePointer?
    try check(
      natsConnection_Connect(&connection, options),
      doing: "connecting to \(urls.joined(separator: ","))")
    guard let connection else { throw NATSError(NATS_ERR, doing: "connecting to \(urls.joined(separator: ","))") }
    self.pointer = connection
  }

  /// Sets TLS and credentials on nats.c's options; files are read here, so a missing or
  /// malformed one is named before any server is asked.
  private static func apply(_ security: NATSSecurity, to options: OpaquePointer) throws(NATSError) {
    if security.requiresTLS { try check(natsOptions_SetSecure(options, true), doing: "requiring TLS") }
    if let ca = security.caFile {
      try check(natsOptions_LoadCATrustedCertificates(options, ca), doing: "loading the TLS CA file \(ca)")
    }
    if let certificate = security.certificateFile, let key = security.keyFile {
      try check(
        natsOptions_LoadCertificatesChain(options, certificate, key),
        doing: "loading the TLS client certificate \(certificate) and key \(key)")
    }
    if let user = security.user, let password = security.password {
      try check(natsOptions_SetUserInfo(options, user, password), doing: "setting the user \(user)")
    }
    if let token = security.token { try check(natsOptions_SetToken(options, token), doing: "setting the token") }
    if let creds = security.credentialsFile {
      guard FileManager.default.isReadableFile(atPath: creds) else {
        throw NATSError(NATS_INVALID_ARG, doing: "the credentials file \(creds) cannot be read", fromNATS: false)
      }
      try check(
        natsOptions_SetUserCredentialsFromFiles(options, creds, nil), doing: "loading the credentials file \(creds)")
    }
  }

  /// The largest message the server takes, in bytes.
  public var maxPayload: Int { Int(natsConnection_GetMaxPayload(pointer)) }

  deinit {
    natsConnection_Close(pointer)
    natsConnection_Destroy(pointer)
  }
}
