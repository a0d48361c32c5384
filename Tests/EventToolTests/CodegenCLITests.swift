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
