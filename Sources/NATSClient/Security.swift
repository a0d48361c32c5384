/// How a connection proves who it is to the servers, and checks who they are.
///
/// Everything is optional: an empty value connects in plain text, without credentials, as
/// a development server allows. A production cluster wants TLS (``tls`` or a `tls://` URL,
/// the servers checked against ``caFile`` or the system's CAs) and one kind of credential:
/// a user and password, a token, or a `.creds` file (a user JWT and its NKey seed).
///
/// ```swift
/// var security = NATSSecurity()
/// security.caFile = "/etc/eventgraph/nats-ca.pem"
/// security.user = "eventgraph"
/// security.password = try String(contentsOfFile: "/run/secrets/nats-password", encoding: .utf8)
/// let connection = try NATSConnection(urls: ["tls://nats1:4222"], name: "orders", security: security)
/// ```
public struct NATSSecurity: Sendable, Hashable {
  /// Require TLS even for `nats://` URLs (a `tls://` URL requires it by itself).
  public var tls = false
  /// The PEM file of the certificate authorities a server's certificate must chain to.
  ///
  /// Setting it requires TLS. Without it, the system's trusted authorities are used.
  public var caFile: String?
  /// The client's certificate chain (PEM), for servers that verify clients (mutual TLS);
  /// with ``keyFile``.
  public var certificateFile: String?
  /// The client certificate's private key (PEM).
  public var keyFile: String?
  /// A user name, with ``password``.
  public var user: String?
  public var password: String?
  /// A token the servers accept in place of a user.
  public var token: String?
  /// A `.creds` file: a user JWT and the NKey seed that signs the server's challenge.
  public var credentialsFile: String?

  public init() {}

  /// Whether the connection must be encrypted.
  public var requiresTLS: Bool { tls || caFile != nil || certificateFile != nil }

  /// Each setting that does not fit with another, a sentence each; none when the
  /// combination can be used.
  public var conflicts: [String] {
    var found: [String] = []
    if (certificateFile == nil) != (keyFile == nil) {
      found.append("a client certificate needs both its certificate file and its key file")
    }
    if (user == nil) != (password == nil) { found.append("a user needs a password, and a password a user") }
    let kinds = [user != nil, token != nil, credentialsFile != nil].filter { $0 }.count
    if kinds > 1 { found.append("give one kind of credential: a user and password, a token, or a .creds file") }
    return found
  }
}
