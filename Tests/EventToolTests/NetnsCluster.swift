import Foundation
import Testing

/// A three-node JetStream cluster and store hosts `h1`…`hK`, each host in a network namespace
/// of its own (`Tools/netns-cluster start DIR --hosts K --secure`), for one suite: the
/// network between any two hosts can be cut, a host isolated or delayed, and healed.
///
/// The test process stays in the machine's own namespace, which reaches none of the hosts:
/// everything that talks to NATS runs on a host through ``child(on:_:output:)`` and
/// ``eventtool(on:_:)``. The stores' files are on the one file system all hosts share, so the
/// test opens them directly. Needs root (`ip netns`), as `Tools/test` runs.
final class NetnsCluster: @unchecked Sendable {
  // @unchecked Sendable: every property is set in init and never changed.
  let directory: String
  let urls: String

  static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Tools/netns-cluster").path

  /// Whether this process may make network namespaces.
  static var available: Bool { getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/sbin/ip") }

  init(hosts: Int) throws {
    directory = temporaryDirectory("netns")
    // Through the shell, as NATSCluster does: the servers stay in the background.
    guard
      Self.shell(
        "start '\(directory)' --hosts \(hosts) --secure > '\(directory)/urls' 2> '\(directory)/start.log'") == 0
    else {
      let log = (try? String(contentsOfFile: directory + "/start.log", encoding: .utf8)) ?? ""
      _ = Self.shell("stop '\(directory)'")
      throw NATSCluster.ClusterError(message: "Tools/netns-cluster start failed (run Tools/setup as root): \(log)")
    }
    urls = ((try? String(contentsOfFile: directory + "/urls", encoding: .utf8)) ?? "")
      .trimmingCharacters(in: .whitespacesAndNewlines)
  }

  deinit {
    _ = Self.shell("stop '\(directory)' > /dev/null 2>&1")
    removeDirectory(directory)
  }

  /// The options of `eventtool` that connect to the cluster (TLS, user and password).
  var arguments: [String] { NATSCluster.arguments(urls: urls, directory: directory) }

  /// Runs `Tools/netns-cluster ARGUMENTS` through the shell; its exit status.
  @discardableResult
  static func shell(_ arguments: String) -> Int32 {
    system("'\(script)' \(arguments) < /dev/null")
  }

  /// `Tools/netns-cluster VERB DIR ARGUMENTS…`, which must succeed.
  func network(_ verb: String, _ arguments: String...) {
    let status = Self.shell("\(verb) '\(directory)' " + arguments.joined(separator: " ") + " > /dev/null")
    #expect(status == 0, "Tools/netns-cluster \(verb) \(arguments.joined(separator: " ")) failed")
  }

  /// `eventtool ARGUMENTS` started on `host`, running until it ends or is killed.
  func child(on host: String, _ arguments: [String], output: String) throws -> ToolChild {
    try ToolChild(arguments, output: output, through: [Self.script, "exec", directory, host])
  }

  /// `eventtool ARGUMENTS` run on `host` to its end.
  func eventtool(on host: String, _ arguments: [String]) throws -> ToolRunner.Result {
    let tool = ToolRunner.productsDirectory.appendingPathComponent("eventtool").path
    return try ToolRunner.run(at: URL(fileURLWithPath: Self.script), ["exec", directory, host, tool] + arguments)
  }
}
