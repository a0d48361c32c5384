import Foundation
import TestSupport
import Testing

/// Runs a built executable of this package (next to the test bundle) as a user would.
enum ToolRunner {
  static let productsDirectory: URL = {
    var url = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    // The test runner may live inside an .xctest bundle directory on some platforms.
    while url.pathExtension == "xctest" { url = url.deletingLastPathComponent() }
    return url
  }()

  typealias Result = ProgramResult

  /// Runs `eventtool` with `arguments`, feeding `input` to its standard input.
  static func eventtool(_ arguments: [String], input: String? = nil) throws -> Result {
    try run("eventtool", arguments, input: input)
  }

  static func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> Result {
    try run(at: productsDirectory.appendingPathComponent(executable), arguments, input: input)
  }

  /// Runs a system executable (LMDB's tools) with optional input.
  static func runSystem(_ path: String, _ arguments: [String], input: String? = nil) throws -> Result {
    try run(at: URL(fileURLWithPath: path), arguments, input: input)
  }

  static func run(
    at url: URL, _ arguments: [String], input: String? = nil, environment: [String: String]? = nil
  ) throws -> Result {
    try runProgram(at: url, arguments, input: input, environment: environment)
  }
}

func temporaryDirectory(_ label: String = #function) -> String {
  let safe = label.filter { $0.isLetter || $0.isNumber }
  let path = FileManager.default.temporaryDirectory
    .appendingPathComponent("eventtool-tests-\(safe)-\(UUID().uuidString.prefix(8))").path
  try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
  return path
}

/// Waits until `done` holds, checking every 10 ms, for at most `seconds`; whether it did.
func waitUntil(seconds: Double, _ done: () throws -> Bool) rethrows -> Bool {
  let end = Date().addingTimeInterval(seconds)
  while Date() < end {
    if try done() { return true }
    Thread.sleep(forTimeInterval: 0.01)
  }
  return try done()
}

func removeDirectory(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

/// The package's example files.
let examples: String = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
  .deletingLastPathComponent().appendingPathComponent("Docs/examples").path

/// Makes the seed's address book at `store` with model v1 and upcasts it to v2 (through
/// the seed's mapping): a store that holds two model versions.
///
/// - Returns: the upcast's result.
func makeUpcastBook(_ store: String) throws -> ToolRunner.Result {
  #expect(try ToolRunner.eventtool(["init", store, "--model", examples + "/AddressBook.v1.model.json"]).status == 0)
  return try ToolRunner.eventtool([
    "upcast", store, "--model", examples + "/AddressBook.v2.model.json", "--mapping",
    examples + "/AddressBook.v1-v2.mapping.json",
  ])
}
