import Testing

@testable import EventGraph
@testable import EventTool

@Suite("Remedies: the libraries name no command line; eventtool names its command for each")
struct HintsTests {
  /// One of every remedy (a new case fails to compile the switch below until it is added).
  static let all: [Remedy] = [
    .rebuild(path: "/s"), .upgrade(path: "/s"), .salvage(path: "/s"), .promote(path: "/s"),
    .rollback(path: "/s", version: 2), .followAndSwitch(path: "/s"), .allowDroppingRollbackVersion, .discardNewer,
    .newIdentities, .lenient, .registerPolicies,
  ]

  /// What the tool must print for each: its command or option.
  static func expected(_ remedy: Remedy) -> String {
    switch remedy {
    case .rebuild: "eventtool rebuild /s"
    case .upgrade: "eventtool rebuild /s"
    case .salvage: "eventtool salvage /s --out DIR"
    case .promote: "eventtool promote /s --nats URLS"
    case .rollback: "eventtool rollback /s --to 2"
    case .followAndSwitch: "eventtool upcast /s … --follow --switch"
    case .allowDroppingRollbackVersion: "--drop-rollback-version"
    case .discardNewer: "--discard-newer"
    case .newIdentities: "--new-identities"
    case .lenient: "--lenient"
    case .registerPolicies: "build your own tool on the EventTool library"
    }
  }

  @Test("each remedy's library text names no command or option; the tool's names its own", arguments: all)
  func eachRemedy(_ remedy: Remedy) {
    let library = remedy.description
    #expect(!library.contains("eventtool") && !library.contains("--"), "\(library)")
    #expect(ToolHints.hint(remedy).contains(Self.expected(remedy)), "\(ToolHints.hint(remedy))")
  }

  @Test("an error's message is its problem and its remedy: the library's words in the library, the tool's in the tool")
  func messages() throws {
    let errors: [any RemediedError] = [
      StoreError.projectionDamaged(path: "/s", detail: "an entry of links does not match its checksum"),
      StoreError.damaged(path: "/s", detail: "/s/data.mdb is damaged (page 7)"),
      StoreError.replica(path: "/s", stream: "orders"),
      FormatError(line: 3, field: "id", message: "'Book/1' is a store identity", remedy: .newIdentities),
    ]
    for e in errors {
      let remedy = try #require(e.remedy)
      #expect(e.description == "\(e.problem); \(remedy)")
      #expect(ToolHints.message(e) == "\(e.problem); \(ToolHints.hint(remedy))")
      #expect(!e.description.contains("eventtool"))
    }
    // Without a remedy the tool prints the error as the library does.
    let plain = StoreError.readOnly(path: "/s")
    #expect(plain.remedy == nil && ToolHints.message(plain) == plain.description)
  }
}
