import EventGraph
import EventGraphMigration
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
  ///     beside ``EntityCountProjection`` (`entity-counts`).
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
      RollbackCommand(), CloneCommand(), SnapshotCommand(), DiagramCommand(),
      DemoCommand(), ReferenceCommand(),
    ]
  }

  /// Runs a command line (without the program name).
  ///
  /// - Returns: the exit status: 0 success, 1 the operation failed, 2 bad command line.
  public func run(_ arguments: [String], io: ToolIO = .standard()) -> Int32 {
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
      io.printError("eventtool \(parsed.command.name): \(error)")
      return 1
    }
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
func openStore(_ path: String, writing: Bool = false) throws -> EventStore {
  try EventStore(path: path, options: StoreOptions(readOnly: !writing, checkPages: true))
}
