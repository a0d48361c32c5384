import EventGraph
import EventGraphMigration
internal import EventGraphText
import Foundation

/// One `eventtool` subcommand: its description (from which parsing and help come) and
/// what it does, as a thin call into the libraries.
public protocol ToolCommand: Sendable {
  var spec: CommandSpec { get }
  func run(_ arguments: ParsedArguments, _ io: ToolIO) throws
}

/// The `eventtool` command line as a library, so that a service can build its own tool
/// with its own commands (and, later, its own migration policies).
///
/// ```swift
/// let status = EventTool().run(Array(CommandLine.arguments.dropFirst()))
/// exit(status)
/// ```
public struct EventTool: Sendable {
  public let commands: [any ToolCommand]
  public let interface: CommandLineInterface

  /// - Parameters:
  ///   - extraCommands: commands of your own, beside the standard ones.
  ///   - policies: Swift migration policies that mapping files may name (`"policy": NAME`).
  ///   - projections: projections of your own that `rebuild --projection NAME` may rebuild,
  ///     beside `EntityCountProjection` (`entity-counts`).
  public init(
    extraCommands: [any ToolCommand] = [], policies: PolicyRegistry = .init(), projections: [any Projection] = []
  ) {
    let known: [any Projection] = [EntityCountProjection()] + projections
    let all = Self.standardCommands(policies: policies, projections: known) + extraCommands
    self.commands = all
    self.interface = CommandLineInterface(
      toolName: "eventtool", abstract: "An event-sourced object-graph store on LMDB.", commands: all.map(\.spec))
  }

  static func standardCommands(policies: PolicyRegistry, projections: [any Projection]) -> [any ToolCommand] {
    [
      InitCommand(), ImportCommand(), AppendCommand(), ExportCommand(), LogCommand(), ShowCommand(), StatsCommand(),
      FetchCommand(), VerifyCommand(), RebuildCommand(projections: projections), UpcastCommand(policies: policies),
      RollbackCommand(), SwitchCommand(), CloneCommand(), SnapshotCommand(), SalvageCommand(), CompactCommand(),
      BackupCommand(), TruncateCommand(), RetentionCommand(), ConsumersCommand(), ParkedCommand(),
      DiagramCommand(), CodegenCommand(), ReplicateCommand(), ReplicaCommand(), PromoteCommand(), ImportModelCommand(),
      ImportCoreDataCommand(), ImportMappingCommand(), KeygenCommand(), EraseCommand(), RekeyCommand(), ReportCommand(),
      DemoCommand(),
      ReferenceCommand(),
    ]
  }

  /// Runs a command line (without the program name).
  ///
  /// - Returns: the exit status: 0 success, 1 the operation failed, 2 bad command line.
  public func run(_ arguments: [String], io: ToolIO = .standard()) -> Int32 {
    // `--key-file PATH` may follow any command: the store's key-encryption key
    // (Docs/privacy.md), for every store the command opens.
    var arguments = arguments
    var keyFile = ProcessInfo.processInfo.environment["EVENTGRAPH_KEY_FILE"].flatMap { $0.isEmpty ? nil : $0 }
    if let i = arguments.firstIndex(where: { $0 == "--key-file" || $0.hasPrefix("--key-file=") }) {
      if arguments[i] == "--key-file" {
        guard i + 1 < arguments.count else {
          io.printError("eventtool: --key-file needs a value (the key file's path)")
          return 2
        }
        keyFile = arguments[i + 1]
        arguments.removeSubrange(i...(i + 1))
      } else {
        keyFile = String(arguments[i].dropFirst("--key-file=".count))
        arguments.remove(at: i)
      }
    }
    return ToolKey.$file.withValue(keyFile) { runParsed(arguments, io: io) }
  }

  private func runParsed(_ arguments: [String], io: ToolIO) -> Int32 {
    if arguments.first == "--version" {
      io.print(Self.versionText)
      return 0
    }
    let parsed: (command: CommandSpec, arguments: ParsedArguments)
    do {
      parsed = try interface.parse(arguments)
    } catch {
      io.printError(interface.report(error))
      return 2
    }
    if let help = interface.requestedHelp(command: parsed.command, arguments: parsed.arguments) {
      io.writeOut(help.hasSuffix("\n") ? help : help + "\n")
      return 0
    }
    guard let command = commands.first(where: { $0.spec.name == parsed.command.name }) else {
      io.printError("eventtool: no implementation for '\(parsed.command.name)'")
      return 2
    }
    do {
      try command.run(parsed.arguments, io)
      return 0
    } catch let e as ArgumentError {
      io.printError(interface.report(e))
      return 2
    } catch ToolError.usage(let m) {
      io.printError("eventtool \(parsed.command.name): \(m)\nSee 'eventtool help \(parsed.command.name)'.")
      return 2
    } catch {
      io.printError("eventtool \(parsed.command.name): \(Self.message(error))")
      return 1
    }
  }

  /// The release of `eventtool` and the libraries it was built with.
  public static let version = "0.9.0"

  /// What `eventtool --version` prints: the tool's release, the store format it writes and
  /// reads, and the LMDB library it runs on.
  static var versionText: String {
    "eventtool \(version) (store format \(EventStore.formatVersion), \(EventStore.storageLibraryVersion))"
  }

  /// An error as a user reads it: Foundation's file errors (creating a store's directory
  /// where one may not) as `PATH: permission denied`, the project's own by their description.
  static func message(_ error: any Error) -> String {
    let ns = error as NSError
    guard ns.domain == NSCocoaErrorDomain, let path = ns.userInfo[NSFilePathErrorKey] as? String else {
      return ToolHints.message(error)
    }
    guard let underlying = ns.userInfo[NSUnderlyingErrorKey] as? any Error,
      case let posix = underlying as NSError, posix.domain == NSPOSIXErrorDomain
    else {
      return "\(path): \(ns.localizedDescription)"
    }
    return "\(path): \(FileReading.reason(Int32(posix.code)))"
  }
}

// MARK: - Shared argument helpers

extension ParsedArguments {
  /// A required positional (the parser has checked that it is there).
  func required(_ name: String) throws -> String {
    guard let v = positional(name) else { throw ToolError.usage("missing \(name)") }
    return v
  }

  /// A sequence number option, refusing negative or non-numeric text.
  func sequence(_ option: String) throws -> UInt64? {
    guard let text = value(option) else { return nil }
    guard let n = UInt64(text) else {
      throw ToolError.usage("--\(option) needs a sequence number (0 or more), not '\(text)'")
    }
    return n
  }
}

/// Opens a store for a command, read-only unless the command writes, after checking every
/// page of its file: a damaged store is reported, never read through a bad pointer.
///
/// - Throws: the store's errors; a permission that stops the open is reported as such
///   (``reportingAccess(_:writing:_:)``).
func openStore(_ path: String, writing: Bool = false, checkingEntries: Bool = true) throws -> EventStore {
  try reportingAccess(path, writing: writing) {
    try EventStore(
      path: path,
      options: StoreOptions(
        readOnly: !writing, checkPages: true, checkEntries: checkingEntries, keyFile: ToolKey.file))
  }
}

/// The key file a command line gave (`--key-file PATH` or `EVENTGRAPH_KEY_FILE`), for the
/// stores its command opens or creates.
enum ToolKey {
  @TaskLocal static var file: String?
}

/// The `--version N` option of the read commands.
let readVersionOption = OptionSpec(
  "version", valueName: "N",
  help: "Read model version N instead of the active one: the one a following upcast builds, or an older one.")

/// Runs `body` on a snapshot of the version `--version` names, or of the active one.
func read<R>(_ store: EventStore, _ a: ParsedArguments, _ body: (Snapshot) throws -> R) throws -> R {
  guard let version = try a.int("version") else { return try store.read(body) }
  guard version >= 1 else { throw ToolError.usage("--version needs a model version (1 or more), not \(version)") }
  return try store.read(version: version, body)
}

/// Runs `body`, which opens the store at `path`; when the store refuses to open because
/// this process may not read or write one of its files, that is what the error says
/// (`permission denied on book.store/data.mdb (writing)`), rather than "not an EventGraph
/// store".
func reportingAccess<R>(_ path: String, writing: Bool, _ body: () throws -> R) throws -> R {
  do {
    return try body()
  } catch let e as StoreError where e.code == .notAStore {
    if let problem = StoreAccess.problem(at: path, writing: writing) { throw ToolError.failed(problem) }
    throw e
  }
}
