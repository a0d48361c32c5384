import Foundation
import Testing

/// `eventtool codegen` as a user runs it: a model file, a store with two model versions,
/// and bad input.
@Suite("eventtool codegen: record types from a model file or a store")
struct CodegenCLITests {
  static let generated = URL(fileURLWithPath: examples).deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Tests/GeneratedRecordsTests/Generated").path

  @Test("a model file's types are the checked-in ones, on standard output and with --out alike")
  func modelFile() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let expected = try String(contentsOfFile: Self.generated + "/AddressBookV2.swift", encoding: .utf8)
    let printed = try ToolRunner.eventtool([
      "codegen", examples + "/AddressBook.v2.model.json", "--namespace", "AddressBookV2",
    ])
    #expect(printed.status == 0)
    #expect(printed.out == expected)
    let out = dir + "/Book.swift"
    let written = try ToolRunner.eventtool([
      "codegen", examples + "/AddressBook.v2.model.json", "--namespace", "AddressBookV2", "--out", out,
    ])
    #expect(written.status == 0 && written.out.isEmpty)
    #expect(try String(contentsOfFile: out, encoding: .utf8) == expected)
  }

  @Test("a store's types: every model version it holds, each in its enum, the same on every run")
  func store() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = dir + "/book"
    let upcast = try makeUpcastBook(store)
    #expect(upcast.status == 0, "\(upcast.err)")
    let first = try ToolRunner.eventtool(["codegen", store])
    let second = try ToolRunner.eventtool(["codegen", store])
    #expect(first.status == 0)
    #expect(first.out == second.out)
    #expect(first.out.contains("enum AddressBookV1 {"))
    #expect(first.out.contains("enum AddressBookV2 {"))
    #expect(first.out.contains("    var phone1: String?"))
    #expect(first.out.contains("    var phones: [Ref<PhoneBook>] = []"))
    #expect(first.out.components(separatedBy: "import EventGraph").count == 2)
    // The active version's types by names that stay, after every version's own.
    #expect(
      first.out.hasSuffix(
        "typealias AddressBook = AddressBookV2.AddressBook\ntypealias PhoneBook = AddressBookV2.PhoneBook\n"))
    #expect(!first.out.contains("= AddressBookV1."))
    try Self.lint(first.out, dir: dir, name: "Book")
  }

  @Test("--access public: public types, properties, initializers and names that stay, in the package's format")
  func publicAccess() throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let store = dir + "/book"
    #expect(try makeUpcastBook(store).status == 0)
    let r = try ToolRunner.eventtool(["codegen", store, "--access", "public"])
    #expect(r.status == 0, "\(r.err)")
    #expect(r.out.contains("public enum AddressBookV2 {"))
    #expect(r.out.contains("  public struct PhoneBook: Record, Hashable, Sendable {"))
    #expect(r.out.contains("    public var type: Int16 = 0"))
    #expect(
      r.out.contains("    public init(phoneNumber: String, type: Int16 = 0, addressBook: Ref<AddressBook>? = nil) {"))
    #expect(r.out.contains("  public init(reading values: RecordValues) throws {"))
    #expect(r.out.contains("public typealias PhoneBook = AddressBookV2.PhoneBook"))
    #expect(!r.out.contains("\nstruct ") && !r.out.contains("  struct "))
    try Self.lint(r.out, dir: dir, name: "PublicBook")
    let internalOut = try ToolRunner.eventtool(["codegen", store, "--access", "internal"])
    #expect(internalOut.out == (try ToolRunner.eventtool(["codegen", store])).out)
  }

  @Test(
    "a default of every kind, and lines past the width, come out formatted as swift format formats them",
    arguments: ["internal", "public"])
  func defaultsFormatted(access: String) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let model = Self.generated + "/../Defaults.model.json"
    for namespace in [[], ["--namespace", "DefaultsV1"]] {
      let r = try ToolRunner.eventtool(["codegen", model, "--access", access] + namespace)
      #expect(r.status == 0, "\(r.err)")
      #expect(r.out.contains("var blob: Data = Data(["))
      try Self.lint(r.out, dir: dir, name: "Defaults\(namespace.count)")
    }
  }

  /// Checks source text with `swift format lint --strict` and the package's configuration.
  static func lint(_ text: String, dir: String, name: String) throws {
    let file = dir + "/\(name).swift"
    try text.write(toFile: file, atomically: true, encoding: .utf8)
    let configuration = URL(fileURLWithPath: examples).deletingLastPathComponent().deletingLastPathComponent().path
    let lint = try ToolRunner.runSystem(
      "/opt/swift/usr/bin/swift-format",
      ["lint", "--strict", "--configuration", configuration + "/.swift-format", file])
    #expect(lint.status == 0 && lint.err.isEmpty, "\(name): \(lint.err)")
  }

  @Test(
    "the output for every example model passes swift format lint --strict with the package's configuration",
    arguments: ["AddressBook.v1", "AddressBook.v2", "AddressBook.v3", "Company", "Members"])
  func formatted(model: String) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let out = dir + "/\(model.filter(\.isLetter)).swift"
    #expect(try ToolRunner.eventtool(["codegen", examples + "/\(model).model.json", "--out", out]).status == 0)
    let configuration = URL(fileURLWithPath: examples).deletingLastPathComponent().deletingLastPathComponent().path
    let lint = try ToolRunner.runSystem(
      "/opt/swift/usr/bin/swift-format",
      ["lint", "--strict", "--configuration", configuration + "/.swift-format", out])
    #expect(lint.status == 0, "\(lint.err)")
    #expect(lint.err.isEmpty)
  }

  @Test(
    "bad input exits with an error naming what is wrong",
    arguments: [
      (["codegen", "/no/such.model.json"], Int32(1), "/no/such.model.json"),
      (["codegen"], 2, "SOURCE"),
      (["codegen", "STORE-DIR", "--namespace", "X"], 2, "--namespace is for a model file"),
      (["codegen", "MODEL", "--namespace", "Not An Identifier"], 1, "'Not An Identifier' is not a Swift identifier"),
      (["codegen", "MODEL", "--out", "/no/such/dir/x.swift"], 1, "/no/such/dir/x.swift"),
      (["codegen", "MODEL", "--access", "open"], 2, "--access takes internal or public, not 'open'"),
    ])
  func badInput(arguments: [String], status: Int32, message: String) throws {
    let dir = temporaryDirectory()
    defer { removeDirectory(dir) }
    let model = examples + "/Company.model.json"
    let store = dir + "/s"
    #expect(try ToolRunner.eventtool(["init", store, "--model", model]).status == 0)
    let args = arguments.map { $0 == "STORE-DIR" ? store : $0 == "MODEL" ? model : $0 }
    let r = try ToolRunner.eventtool(args)
    #expect(r.status == status)
    #expect(r.err.contains(message), "\(r.err)")
  }
}
