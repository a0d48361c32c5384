import EventGraph
import EventGraphText
import Foundation
import Testing

@testable import EventTool

/// A few `eventtool` commands as the tool describes them: enough to exercise every kind
/// of positional and option.
private let fixtureCommands: [CommandSpec] = [
  CommandSpec(
    name: "init", abstract: "Create an empty store with a model.",
    positionals: [PositionalSpec("STORE", help: "The directory of the new store.")],
    options: [OptionSpec("model", valueName: "FILE", help: "The model file (*.model.json).", isRequired: true)],
    examples: ["eventtool init shop.store --model shop.model.json"]),
  CommandSpec(
    name: "import", abstract: "Import objects from a JSON Lines file.",
    discussion: "The import is one commit unless --batch is given: it lands whole or not at all.",
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("FILE", help: "The JSON Lines file, or '-' for standard input."),
    ],
    options: [OptionSpec("batch", valueName: "N", help: "Commit every N objects.")],
    examples: ["eventtool import shop.store objects.jsonl", "eventtool import shop.store - --batch 1000"]),
  CommandSpec(
    name: "log", abstract: "Print the events of a store.",
    positionals: [PositionalSpec("STORE", help: "The store directory.")],
    options: [
      OptionSpec("from", valueName: "SEQ", help: "The first event to print."),
      OptionSpec("to", valueName: "SEQ", help: "The last event to print."),
      OptionSpec("object", valueName: "ID", help: "Only the events of this object."),
      OptionSpec("json", help: "Print JSON Lines."),
    ],
    examples: ["eventtool log shop.store --from 10 --json"]),
  CommandSpec(
    name: "show", abstract: "Show one object.",
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("ID", help: "The object's identity, such as AddressBook/1."),
    ],
    options: [
      OptionSpec("at", valueName: "SEQ", help: "Show the object as it was after event SEQ."),
      OptionSpec("json", help: "Print JSON."),
    ],
    examples: ["eventtool show shop.store AddressBook/1 --at 12"]),
  CommandSpec(
    name: "clone", abstract: "Copy an object graph.",
    positionals: [
      PositionalSpec("STORE", help: "The store directory."),
      PositionalSpec("ID", help: "The root of the graph to copy."),
    ],
    options: [
      OptionSpec("deep", valueName: "REL,...", help: "Relationships whose objects are copied too.", isRepeatable: true),
      OptionSpec(
        "reference", valueName: "REL,...", help: "Relationships that keep pointing at the originals.",
        isRepeatable: true),
      OptionSpec("into", valueName: "STORE2", help: "Write the copy into another store."),
      OptionSpec("json", help: "Print the map from old to new identities as JSON."),
    ],
    examples: ["eventtool clone shop.store Company/3 --deep employees --reference boss"]),
  CommandSpec(
    name: "demo", abstract: "Run the seed scenario end to end in a fresh directory.",
    positionals: [PositionalSpec("DIR", help: "Where to create the demo stores.", isOptional: true)],
    examples: ["eventtool demo", "eventtool demo /tmp/demo"]),
]

private let cli = CommandLineInterface(
  toolName: "eventtool", abstract: "Inspect, migrate and copy EventGraph stores.", commands: fixtureCommands)

// MARK: - Parse cases

/// A command line that must parse, and what must be read from it.
struct ValidParseCase: Sendable, CustomTestStringConvertible {
  let arguments: [String]
  let command: String
  let positionals: [String: String]
  let values: [String: [String]]
  let flags: [String]
  var helpRequested = false
  var testDescription: String { arguments.joined(separator: " ") }
}

/// A command line that must be refused, with the kind of mistake and the message.
struct InvalidParseCase: Sendable, CustomTestStringConvertible {
  let arguments: [String]
  let kind: ArgumentError.Kind
  let message: String
  var testDescription: String { arguments.joined(separator: " ") }
}

@Suite("Command-line parsing")
struct CommandLineParsingTests {
  static let validCases: [ValidParseCase] = [
    ValidParseCase(
      arguments: ["init", "s", "--model", "m.json"], command: "init", positionals: ["STORE": "s"],
      values: ["model": ["m.json"]], flags: []),
    ValidParseCase(
      arguments: ["init", "--model=m.json", "s"], command: "init", positionals: ["STORE": "s"],
      values: ["model": ["m.json"]], flags: []),
    ValidParseCase(
      arguments: ["import", "s", "-", "--batch", "100"], command: "import", positionals: ["STORE": "s", "FILE": "-"],
      values: ["batch": ["100"]], flags: []),
    ValidParseCase(
      arguments: ["log", "s", "--json", "--from", "3", "--to=9"], command: "log", positionals: ["STORE": "s"],
      values: ["from": ["3"], "to": ["9"]], flags: ["json"]),
    ValidParseCase(
      arguments: ["show", "s", "AddressBook/1", "--at", "-1"], command: "show",
      positionals: ["STORE": "s", "ID": "AddressBook/1"], values: ["at": ["-1"]], flags: []),
    ValidParseCase(
      arguments: ["show", "--", "-s", "--json"], command: "show", positionals: ["STORE": "-s", "ID": "--json"],
      values: [:], flags: []),
    ValidParseCase(
      arguments: ["show", "s", "-1"], command: "show", positionals: ["STORE": "s", "ID": "-1"], values: [:], flags: []
    ),
    ValidParseCase(
      arguments: ["clone", "s", "Company/3", "--deep", "employees,projects", "--deep", "boss", "--reference=a"],
      command: "clone", positionals: ["STORE": "s", "ID": "Company/3"],
      values: ["deep": ["employees,projects", "boss"], "reference": ["a"]], flags: []),
    ValidParseCase(
      arguments: ["clone", "s", "C/3", "--into="], command: "clone", positionals: ["STORE": "s", "ID": "C/3"],
      values: ["into": [""]], flags: []),
    ValidParseCase(arguments: ["demo"], command: "demo", positionals: [:], values: [:], flags: []),
    ValidParseCase(
      arguments: ["demo", "/tmp/d"], command: "demo", positionals: ["DIR": "/tmp/d"], values: [:], flags: []),
    ValidParseCase(
      arguments: ["import", "--help"], command: "import", positionals: [:], values: [:], flags: [], helpRequested: true),
    ValidParseCase(
      arguments: ["import", "s", "--bogus", "-h"], command: "import", positionals: [:], values: [:], flags: [],
      helpRequested: true),
    ValidParseCase(arguments: ["help"], command: "help", positionals: [:], values: [:], flags: []),
    ValidParseCase(
      arguments: ["help", "clone"], command: "help", positionals: ["COMMAND": "clone"], values: [:], flags: []),
    ValidParseCase(arguments: ["--help"], command: "help", positionals: [:], values: [:], flags: []),
    ValidParseCase(arguments: ["-h", "log"], command: "help", positionals: ["COMMAND": "log"], values: [:], flags: []),
  ]

  @Test("parses valid command lines", arguments: validCases)
  func parsesValid(_ testCase: ValidParseCase) throws {
    let (command, arguments) = try cli.parse(testCase.arguments)
    #expect(command.name == testCase.command)
    #expect(arguments.helpRequested == testCase.helpRequested)
    for positional in command.positionals {
      #expect(arguments.positional(positional.name) == testCase.positionals[positional.name])
    }
    for option in command.options {
      if option.isFlag {
        #expect(arguments.flag(option.name) == testCase.flags.contains(option.name), "--\(option.name)")
      } else {
        #expect(arguments.values(option.name) == testCase.values[option.name] ?? [], "--\(option.name)")
        #expect(arguments.value(option.name) == testCase.values[option.name]?.last, "--\(option.name)")
      }
    }
  }

  static let invalidCases: [InvalidParseCase] = [
    InvalidParseCase(arguments: [], kind: .missingCommand, message: "missing command"),
    InvalidParseCase(arguments: ["--json"], kind: .missingCommand, message: "expected a command before '--json'"),
    InvalidParseCase(
      arguments: ["improt", "s"], kind: .unknownCommand, message: "unknown command 'improt' (did you mean 'import'?)"),
    InvalidParseCase(arguments: ["frobnicate"], kind: .unknownCommand, message: "unknown command 'frobnicate'"),
    InvalidParseCase(
      arguments: ["help", "shwo"], kind: .unknownCommand, message: "unknown command 'shwo' (did you mean 'show'?)"),
    InvalidParseCase(
      arguments: ["--help", "lgo"], kind: .unknownCommand, message: "unknown command 'lgo' (did you mean 'log'?)"),
    InvalidParseCase(
      arguments: ["import", "s", "f", "--bach", "3"], kind: .unknownOption,
      message: "unknown option '--bach' (did you mean '--batch'?)"),
    InvalidParseCase(
      arguments: ["log", "s", "--josn"], kind: .unknownOption,
      message: "unknown option '--josn' (did you mean '--json'?)"
    ),
    InvalidParseCase(
      arguments: ["import", "s", "f", "-batch", "3"], kind: .unknownOption,
      message: "unknown option '-batch' (did you mean '--batch'?)"),
    InvalidParseCase(
      arguments: ["log", "s", "--verbose"], kind: .unknownOption, message: "unknown option '--verbose'"),
    InvalidParseCase(arguments: ["log", "s", "-v"], kind: .unknownOption, message: "unknown option '-v'"),
    InvalidParseCase(
      arguments: ["import", "s", "f", "--batch"], kind: .missingValue, message: "missing value for option '--batch N'"),
    InvalidParseCase(
      arguments: ["log", "s", "--from", "--json"], kind: .missingValue, message: "missing value for option '--from SEQ'"
    ),
    InvalidParseCase(
      arguments: ["log", "s", "--json=yes"], kind: .unexpectedValue,
      message: "option '--json' is a flag and takes no value"),
    InvalidParseCase(arguments: ["import", "s"], kind: .missingArgument, message: "missing argument FILE"),
    InvalidParseCase(arguments: ["init", "--model", "m"], kind: .missingArgument, message: "missing argument STORE"),
    InvalidParseCase(
      arguments: ["init", "s"], kind: .missingOption, message: "missing required option '--model FILE'"),
    InvalidParseCase(
      arguments: ["log", "s", "extra"], kind: .unexpectedArgument, message: "unexpected argument 'extra'"),
    InvalidParseCase(arguments: ["demo", "a", "b"], kind: .unexpectedArgument, message: "unexpected argument 'b'"),
    InvalidParseCase(
      arguments: ["show", "s", "A/1", "--at", "1", "--at", "2"], kind: .duplicateOption,
      message: "option '--at' given more than once"),
    InvalidParseCase(
      arguments: ["log", "s", "--json", "--json"], kind: .duplicateOption,
      message: "option '--json' given more than once"
    ),
  ]

  @Test("refuses invalid command lines, saying what is wrong", arguments: invalidCases)
  func refusesInvalid(_ testCase: InvalidParseCase) {
    do {
      let (command, _) = try cli.parse(testCase.arguments)
      Issue.record("parsed as '\(command.name)'")
    } catch {
      #expect(error.kind == testCase.kind)
      #expect(error.description == testCase.message)
    }
  }

  @Test("reads integer options and names the option and text when one is not an integer")
  func integerOptions() throws {
    let (_, arguments) = try cli.parse(["import", "s", "f", "--batch", "250"])
    #expect(try arguments.int("batch") == 250)
    let (_, negative) = try cli.parse(["show", "s", "A/1", "--at", "-1"])
    #expect(try negative.int("at") == -1)
    let (_, absent) = try cli.parse(["show", "s", "A/1"])
    #expect(try absent.int("at") == nil)
    let (_, bad) = try cli.parse(["import", "s", "f", "--batch", "lots"])
    #expect(throws: ArgumentError.self) { try bad.int("batch") }
    do {
      _ = try bad.int("batch")
    } catch {
      #expect(error.kind == .invalidValue)
      #expect(error.description == "invalid value 'lots' for option '--batch': expected an integer")
      #expect(error.command == "import")
    }
  }

  @Test("suggests the nearest command or option within two edits, transpositions included")
  func suggestions() {
    #expect(Spelling.nearest(to: "imoprt", among: ["import", "export"]) == "import")
    #expect(Spelling.nearest(to: "exprot", among: ["import", "export"]) == "export")
    #expect(Spelling.nearest(to: "--bacth", among: ["--batch", "--json"]) == "--batch")
    #expect(Spelling.nearest(to: "snapshto", among: ["snapshot", "stats"]) == "snapshot")
    #expect(Spelling.nearest(to: "verfy", among: ["very", "verify"]) == "verify")
    #expect(Spelling.nearest(to: "zzz", among: ["import"]) == nil)
    #expect(Spelling.nearest(to: "to", among: ["at"]) == nil)
    #expect(Spelling.distance(Array("ca"), Array("abc")) == 3)
    #expect(Spelling.distance(Array("abcd"), Array("acbd")) == 1)
  }

  @Test("reports an error with the command and where to find its usage")
  func errorReport() {
    do {
      _ = try cli.parse(["import", "s", "f", "--bach", "3"])
    } catch {
      #expect(
        cli.report(error)
          == "eventtool import: unknown option '--bach' (did you mean '--batch'?)\nSee 'eventtool help import'.")
    }
    do {
      _ = try cli.parse(["improt"])
    } catch {
      #expect(
        cli.report(error) == "eventtool: unknown command 'improt' (did you mean 'import'?)\nSee 'eventtool help'.")
    }
  }
}

// MARK: - Help

/// `text` with every run of spaces and newlines made one space.
private func collapsingWhitespace(_ text: String) -> String {
  text.split(whereSeparator: { $0 == " " || $0 == "\n" }).joined(separator: " ")
}

@Suite("Command-line help")
struct CommandLineHelpTests {
  @Test("gives the command list for help, --help and -h, and a command's help for help COMMAND and --help")
  func requestedHelp() throws {
    for words in [["help"], ["--help"], ["-h"]] {
      let (command, arguments) = try cli.parse(words)
      #expect(cli.requestedHelp(command: command, arguments: arguments) == cli.usage())
    }
    let clone = try #require(cli.command(named: "clone"))
    for words in [["help", "clone"], ["clone", "--help"], ["clone", "-h"], ["--help", "clone"]] {
      let (command, arguments) = try cli.parse(words)
      #expect(cli.requestedHelp(command: command, arguments: arguments) == cli.help(for: clone))
    }
    let (command, arguments) = try cli.parse(["log", "s"])
    #expect(cli.requestedHelp(command: command, arguments: arguments) == nil)
  }

  @Test("lists every command with its abstract")
  func usageListsCommands() {
    let usage = cli.usage()
    for command in cli.commands {
      #expect(usage.contains("  \(command.name)"), "\(command.name)")
      #expect(usage.contains(command.abstract), "\(command.name)")
    }
    #expect(usage.hasPrefix("OVERVIEW: Inspect, migrate and copy EventGraph stores."))
  }

  @Test("shows every argument, option and example of each command", arguments: fixtureCommands.map(\.name))
  func helpIsComplete(commandName: String) throws {
    let command = try #require(cli.command(named: commandName))
    let help = cli.help(for: command)
    // Wrapping may break any sentence across lines: compare with whitespace collapsed.
    let words = collapsingWhitespace(help)
    #expect(words.contains("USAGE: \(cli.usageLine(for: command))"))
    for positional in command.positionals {
      #expect(help.contains("  \(positional.name) "))
      #expect(words.contains(collapsingWhitespace(positional.help)))
    }
    for option in command.options {
      #expect(help.contains("  \(option.synopsis) "))
      #expect(words.contains(collapsingWhitespace(option.help)))
    }
    #expect(help.contains("-h, --help"))
    #expect(!command.examples.isEmpty)
    for example in command.examples {
      #expect(help.contains(example))
    }
    for line in help.split(separator: "\n") {
      #expect(line.count <= CommandLineInterface.helpWidth, "too long: \(line)")
      #expect(line.last != " ", "trailing space: \(line)")
    }
  }

  @Test("lays out a command's help with aligned columns")
  func helpLayout() throws {
    let show = try #require(cli.command(named: "show"))
    let expected = """
      OVERVIEW: Show one object.

      USAGE: eventtool show STORE ID [--at SEQ] [--json]

      ARGUMENTS:
        STORE       The store directory.
        ID          The object's identity, such as AddressBook/1.

      OPTIONS:
        --at SEQ    Show the object as it was after event SEQ.
        --json      Print JSON.
        -h, --help  Show this help.

      EXAMPLES:
        eventtool show shop.store AddressBook/1 --at 12
      """
    #expect(cli.help(for: show) == expected)
  }

  @Test("writes required and repeatable options in the usage line")
  func usageLine() throws {
    let initCommand = try #require(cli.command(named: "init"))
    #expect(cli.usageLine(for: initCommand) == "eventtool init STORE --model FILE")
    let clone = try #require(cli.command(named: "clone"))
    #expect(
      cli.usageLine(for: clone)
        == "eventtool clone STORE ID [--deep REL,...] ... [--reference REL,...] ... [--into STORE2] [--json]")
    let demo = try #require(cli.command(named: "demo"))
    #expect(cli.usageLine(for: demo) == "eventtool demo [DIR]")
  }

  @Test("wraps long help at 80 columns under its column")
  func wrapping() throws {
    let long = CommandSpec(
      name: "long", abstract: "A command with long help.",
      options: [
        OptionSpec(
          "where", valueName: "PREDICATE",
          help: "Only the objects for which PREDICATE is true, written in the NSPredicate format-string "
            + "subset that the formats document describes, such as \"age > 30 AND name BEGINSWITH 'A'\"."),
        OptionSpec("a-very-long-option-name-indeed", valueName: "VALUE", help: "Placed on its own line."),
      ],
      examples: ["eventtool long --where 'age > 30'"])
    let tool = CommandLineInterface(toolName: "eventtool", abstract: "Tool.", commands: [long])
    let help = tool.help(for: long)
    let lines = help.split(separator: "\n").map(String.init)
    #expect(lines.allSatisfy { $0.count <= 80 })
    let whereLine = try #require(lines.firstIndex { $0.hasPrefix("  --where PREDICATE") })
    let column = lines[whereLine].distance(
      from: lines[whereLine].startIndex, to: try #require(lines[whereLine].firstIndex(of: "O")))
    #expect(lines[whereLine + 1].prefix(column).allSatisfy { $0 == " " })
    #expect(lines[whereLine + 1].dropFirst(column).first != " ")
    #expect(lines.contains("  --a-very-long-option-name-indeed VALUE"))
  }

  @Test("finds no mistakes in well-formed descriptions, and finds them in bad ones")
  func specificationProblems() {
    #expect(cli.specificationProblems() == [])
    let bad = CommandLineInterface(
      toolName: "eventtool", abstract: "Tool.",
      commands: [
        CommandSpec(
          name: "x", abstract: "X.",
          positionals: [PositionalSpec("A", help: "a", isOptional: true), PositionalSpec("B", help: "b")],
          options: [OptionSpec("json", help: "j"), OptionSpec("json", help: "j")], examples: []),
        CommandSpec(name: "y", abstract: "Y.", examples: ["othertool y"]),
      ])
    #expect(
      bad.specificationProblems() == [
        "x: option '--json' is declared twice",
        "x: a required argument follows an optional one",
        "x: no example",
        "y: example 'othertool y' does not start with 'eventtool y'",
      ])
  }
}

// MARK: - Reference and completion

@Suite("Command-line reference and completion")
struct CommandLineReferenceTests {
  @Test("the Markdown reference has every command, argument, option and example")
  func markdownIsComplete() {
    let markdown = cli.markdownReference()
    #expect(markdown.hasPrefix("# `eventtool`\n"))
    for command in cli.commands {
      #expect(markdown.contains("## `eventtool \(command.name)`"))
      #expect(markdown.contains("[`\(command.name)`](#eventtool-\(command.name))"))
      #expect(markdown.contains(cli.usageLine(for: command)))
      for positional in command.positionals {
        #expect(markdown.contains("| `\(positional.name)` |"))
      }
      for option in command.options {
        #expect(markdown.contains("| `\(option.synopsis)` |"))
      }
      for example in command.examples {
        #expect(markdown.contains(example))
      }
    }
  }

  @Test("the completion script names every command and option")
  func completionIsComplete() {
    let script = cli.bashCompletionScript()
    #expect(script.contains("complete -o default -F _eventtool eventtool"))
    for command in cli.commands {
      #expect(script.contains("    \(command.name))"))
      for option in command.options {
        #expect(script.contains("--\(option.name)"))
      }
    }
  }

  /// Runs the completion function in bash for the words typed so far.
  private func complete(_ words: [String]) throws -> [String] {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/bash")
    let quoted = words.map { "'\($0)'" }.joined(separator: " ")
    let program =
      cli.bashCompletionScript()
      + "COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1); _eventtool; printf '%s\\n' \"${COMPREPLY[@]}\"\n"
    process.arguments = ["--norc", "--noprofile", "-c", program]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    return String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
  }

  @Test(
    "completes commands and options when run by bash",
    .enabled(if: FileManager.default.isExecutableFile(atPath: "/bin/bash")))
  func completionRuns() throws {
    #expect(try complete(["eventtool", "im"]) == ["import"])
    #expect(try complete(["eventtool", "help", "sh"]) == ["show"])
    #expect(try complete(["eventtool", "log", "s", "--"]) == ["--from", "--to", "--object", "--json", "--help"])
    #expect(try complete(["eventtool", "clone", "s", "--r"]) == ["--reference"])
    #expect(try complete(["eventtool", "init", "--model", ""]) == [])
    #expect(try complete(["eventtool", "show", ""]) == [])
  }
}
