import Foundation
import NATSClient
import Testing

/// A three-node JetStream cluster on loopback for one test suite, started by
/// `Tools/nats-cluster` in a temporary directory and stopped when released.
///
/// It runs as production should: TLS with a CA of its own, and one user with a password
/// (`Tools/nats-cluster start DIR --secure`); ``security`` and ``arguments`` connect to it.
final class NATSCluster: @unchecked Sendable {
  // @unchecked Sendable: every property is set in init and never changed.
  let directory: String
  let urls: String
  /// The CA, the user and the password that the cluster accepts.
  let security: NATSSecurity

  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Tools/nats-cluster").path

  init() throws {
    directory = temporaryDirectory("nats")
    // Through the shell, not Foundation's Process: the script leaves the servers running in
    // the background, and Process then never sees the script itself end.
    guard Self.shell("start '\(directory)' --secure > '\(directory)/urls' 2> '\(directory)/start.log'") == 0 else {
      let log = (try? String(contentsOfFile: directory + "/start.log", encoding: .utf8)) ?? ""
      throw ClusterError(message: "Tools/nats-cluster start failed (run Tools/setup): \(log)")
    }
    urls = ((try? String(contentsOfFile: directory + "/urls", encoding: .utf8)) ?? "")
      .trimmingCharacters(in: .whitespacesAndNewlines)
    var security = NATSSecurity()
    security.caFile = directory + "/tls/ca.pem"
    security.user = "eventgraph"
    security.password = ((try? String(contentsOfFile: directory + "/password", encoding: .utf8)) ?? "")
      .trimmingCharacters(in: .whitespacesAndNewlines)
    self.security = security
  }

  /// The options of `eventtool` (and of StressWriter) that connect to the cluster.
  var arguments: [String] { Self.arguments(urls: urls, directory: directory) }

  /// The connection options for a cluster started `--secure` in `directory` (by this
  /// script or Tools/netns-cluster, which lay out its CA and password alike).
  static func arguments(urls: String, directory: String) -> [String] {
    [
      "--nats", urls, "--nats-tls-ca", directory + "/tls/ca.pem", "--nats-user", "eventgraph", "--nats-password-file",
      directory + "/password",
    ]
  }

  deinit {
    _ = Self.shell("stop '\(directory)'")
    removeDirectory(directory)
  }

  /// Runs `Tools/nats-cluster ARGUMENTS` through the shell; its exit status.
  @discardableResult
  static func shell(_ arguments: String) -> Int32 {
    system("'\(script)' \(arguments) < /dev/null")
  }

  var urlList: [String] { urls.split(separator: ",").map(String.init) }

  func jetStream() throws -> JetStream {
    try JetStream(NATSConnection(urls: urlList, name: "tests", security: security), timeout: 5)
  }

  /// Kills node `n` (1–3) with SIGKILL, or starts it again.
  func kill(node n: Int) { Self.shell("kill '\(directory)' \(n)") }
  func restart(node n: Int) { Self.shell("restart '\(directory)' \(n) > /dev/null 2>&1") }

  struct ClusterError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
  }
}
