import EventGraph
internal import EventGraphText

/// A tool with subcommands, parsed and documented from their ``CommandSpec``s.
///
/// Help is itself a command. The interface adds a `help [COMMAND]` command to the ones
/// it is given, and `eventtool --help` and `eventtool -h` parse as `help`. `-h` or
/// `--help` after a command name sets ``ParsedArguments/helpRequested`` instead. A caller
/// asks ``requestedHelp(command:arguments:)`` for the text to print, so all three forms
/// are handled in one place:
///
/// ```swift
/// let cli = CommandLineInterface(toolName: "eventtool", abstract: "…", commands: commands)
/// do {
///   let (command, arguments) = try cli.parse(Array(CommandLine.arguments.dropFirst()))
///   if let help = cli.requestedHelp(command: command, arguments: arguments) {
///     print(help)
///     return 0
///   }
///   return try run(command.name, arguments)
/// } catch let error as ArgumentError {
///   printToStandardError(cli.report(error))
///   return 2
/// }
/// ```
///
/// Option syntax: `--name value`, `--name=value`, flags (`--json`), `--` to end options.
/// An option's value is the next argument unless that starts with `--` or is `-h`, so
/// negative numbers and `-` (standard input) pass as values: `--at -1`. A value that does
/// start with `--` is written `--name=--value`.
public struct CommandLineInterface: Sendable {
  /// The name the tool is run by: `eventtool`.
  public let toolName: String
  /// One sentence about the tool, at the top of ``usage()``.
  public let abstract: String
  /// The commands, in the order ``usage()`` lists them, ending with the built-in `help`
  /// unless one named `help` was given.
  public let commands: [CommandSpec]

  /// The name of the built-in help command.
  public static let helpCommandName = "help"
  /// The placeholder of the help command's optional positional argument.
  public static let helpTopicName = "COMMAND"

  public init(toolName: String, abstract: String, commands: [CommandSpec]) {
    self.toolName = toolName
    self.abstract = abstract
    if commands.contains(where: { $0.name == Self.helpCommandName }) {
      self.commands = commands
    } else {
      let help = CommandSpec(
        name: Self.helpCommandName,
        abstract: "Show the list of commands, or the help of one command.",
        positionals: [
          PositionalSpec(Self.helpTopicName, help: "The command to explain.", isOptional: true)
        ],
        examples: ["\(toolName) help", "\(toolName) help \(commands.first?.name ?? Self.helpCommandName)"])
      self.commands = commands + [help]
    }
  }

  /// The command named `name`.
  public func command(named name: String) -> CommandSpec? {
    commands.first { $0.name == name }
  }

  // MARK: - Parsing

  /// Parses a command line (without the program name) into the command it selects and
  /// that command's arguments.
  ///
  /// `[]` is an error (``ArgumentError/Kind/missingCommand``); `--help`, `-h` and
  /// `help [COMMAND]` select the built-in help command.
  ///
  /// - Throws: ``ArgumentError`` saying what is wrong, with a suggestion for a misspelt
  ///   command or option.
  public func parse(_ arguments: [String]) throws(ArgumentError) -> (command: CommandSpec, arguments: ParsedArguments) {
    guard let first = arguments.first else {
      throw ArgumentError(.missingCommand, command: nil, subject: "", message: "missing command")
    }
    let command: CommandSpec
    if first == "-h" || first == "--help", let help = self.command(named: Self.helpCommandName) {
      command = help
    } else if first.hasPrefix("-") {
      throw ArgumentError(
        .missingCommand, command: nil, subject: first, message: "expected a command before '\(first)'")
    } else if let named = self.command(named: first) {
      command = named
    } else {
      throw unknownCommand(first)
    }
    let parsed = try parse(Array(arguments.dropFirst()), for: command)
    if command.name == Self.helpCommandName, let topic = parsed.positional(Self.helpTopicName),
      self.command(named: topic) == nil
    {
      throw unknownCommand(topic)
    }
    return (command, parsed)
  }

  /// Parses the arguments that follow the command name.
  func parse(_ arguments: [String], for command: CommandSpec) throws(ArgumentError) -> ParsedArguments {
    let optionArguments = arguments.prefix { $0 != "--" }
    if optionArguments.contains(where: { $0 == "-h" || $0 == "--help" }) {
      return ParsedArguments(commandName: command.name, helpRequested: true)
    }

    var positionalValues: [String] = []
    var optionValues: [String: [String]] = [:]
    var flags: Set<String> = []
    var given: Set<String> = []
    var optionsEnded = false
    var index = 0
    while index < arguments.count {
      let argument = arguments[index]
      index += 1
      if optionsEnded || argument == "-" || isNegativeNumber(argument) || !argument.hasPrefix("-") {
        positionalValues.append(argument)
        continue
      }
      if argument == "--" {
        optionsEnded = true
        continue
      }
      guard argument.hasPrefix("--") else {
        throw unknownOption(argument, in: command)
      }
      let body = argument.dropFirst(2)
      let name = String(body.prefix { $0 != "=" })
      let inlineValue = body.firstIndex(of: "=").map { String(body[body.index(after: $0)...]) }
      guard let option = command.option(named: name) else {
        throw unknownOption("--\(name)", in: command)
      }
      if !given.insert(name).inserted, !option.isRepeatable {
        throw ArgumentError(
          .duplicateOption, command: command.name, subject: "--\(name)",
          message: "option '--\(name)' given more than once")
      }
      if option.isFlag {
        if inlineValue != nil {
          throw ArgumentError(
            .unexpectedValue, command: command.name, subject: "--\(name)",
            message: "option '--\(name)' is a flag and takes no value")
        }
        flags.insert(name)
        continue
      }
      if let inlineValue {
        optionValues[name, default: []].append(inlineValue)
      } else if index < arguments.count, !arguments[index].hasPrefix("--"), arguments[index] != "-h" {
        optionValues[name, default: []].append(arguments[index])
        index += 1
      } else {
        throw ArgumentError(
          .missingValue, command: command.name, subject: "--\(name)",
          message: "missing value for option '\(option.synopsis)'")
      }
    }

    var positionals: [String: String] = [:]
    for (spec, value) in zip(command.positionals, positionalValues) {
      positionals[spec.name] = value
    }
    if positionalValues.count > command.positionals.count {
      let extra = positionalValues[command.positionals.count]
      throw ArgumentError(
        .unexpectedArgument, command: command.name, subject: extra, message: "unexpected argument '\(extra)'")
    }
    if let missing = command.positionals.first(where: { !$0.isOptional && positionals[$0.name] == nil }) {
      throw ArgumentError(
        .missingArgument, command: command.name, subject: missing.name, message: "missing argument \(missing.name)")
    }
    if let missing = command.options.first(where: { $0.isRequired && !given.contains($0.name) }) {
      throw ArgumentError(
        .missingOption, command: command.name, subject: "--\(missing.name)",
        message: "missing required option '\(missing.synopsis)'")
    }
    return ParsedArguments(
      commandName: command.name, positionals: positionals, optionValues: optionValues, flags: flags)
  }

  /// `-1`, `-0.5`: a value, not an option.
  private func isNegativeNumber(_ argument: String) -> Bool {
    guard argument.hasPrefix("-"), let second = argument.dropFirst().first else { return false }
    return ((second.isASCII && second.isNumber) || second == ".") && Double(argument) != nil
  }

  private func unknownCommand(_ name: String) -> ArgumentError {
    ArgumentError(
      .unknownCommand, command: nil, subject: name,
      suggestion: Spelling.nearest(to: name, among: commands.map(\.name)),
      message: "unknown command '\(name)'")
  }

  private func unknownOption(_ option: String, in command: CommandSpec) -> ArgumentError {
    let names = command.options.map { "--\($0.name)" } + ["--help"]
    var suggestion = Spelling.nearest(to: option, among: names)
    // `-batch` for `--batch`: one dash too few is not a spelling mistake the distance sees.
    if !option.hasPrefix("--"), names.contains("-" + option) {
      suggestion = "-" + option
    }
    return ArgumentError(
      .unknownOption, command: command.name, subject: option, suggestion: suggestion,
      message: "unknown option '\(option)'")
  }

  // MARK: - Help on request

  /// The text to print when the command line asks for help, or nil when it does not:
  /// the command list for `help`, `--help` and `-h`; a command's help for
  /// `help COMMAND` and `COMMAND --help`.
  public func requestedHelp(command: CommandSpec, arguments: ParsedArguments) -> String? {
    if command.name == Self.helpCommandName, !arguments.helpRequested {
      if let topic = arguments.positional(Self.helpTopicName), let topicCommand = self.command(named: topic) {
        return help(for: topicCommand)
      }
      return usage()
    }
    return arguments.helpRequested ? help(for: command) : nil
  }

  /// An error as the tool prints it to standard error: prefixed by the tool and command,
  /// followed by where to find the usage.
  ///
  /// ```
  /// eventtool import: unknown option '--bach' (did you mean '--batch'?)
  /// See 'eventtool help import'.
  /// ```
  public func report(_ error: ArgumentError) -> String {
    if let command = error.command {
      return "\(toolName) \(command): \(error)\nSee '\(toolName) \(Self.helpCommandName) \(command)'."
    }
    return "\(toolName): \(error)\nSee '\(toolName) \(Self.helpCommandName)'."
  }

  // MARK: - Checking the descriptions

  /// Mistakes in the command descriptions themselves, for a test to assert there are
  /// none: duplicate names, a required positional after an optional one, a command
  /// without an example, an example that does not run the command.
  public func specificationProblems() -> [String] {
    var problems: [String] = []
    var commandNames: Set<String> = []
    for command in commands {
      if !commandNames.insert(command.name).inserted {
        problems.append("command '\(command.name)' is declared twice")
      }
      var optionNames: Set<String> = ["help"]
      for option in command.options where !optionNames.insert(option.name).inserted {
        problems.append("\(command.name): option '--\(option.name)' is declared twice")
      }
      var positionalNames: Set<String> = []
      for positional in command.positionals where !positionalNames.insert(positional.name).inserted {
        problems.append("\(command.name): argument \(positional.name) is declared twice")
      }
      if let firstOptional = command.positionals.firstIndex(where: \.isOptional),
        command.positionals[firstOptional...].contains(where: { !$0.isOptional })
      {
        problems.append("\(command.name): a required argument follows an optional one")
      }
      if command.examples.isEmpty {
        problems.append("\(command.name): no example")
      }
      let prefix = "\(toolName) \(command.name)"
      for example in command.examples where example != prefix && !example.hasPrefix(prefix + " ") {
        problems.append("\(command.name): example '\(example)' does not start with '\(prefix)'")
      }
    }
    return problems
  }
}
