extension CommandLineInterface {
  /// The width help text is wrapped to.
  static let helpWidth = 80
  /// The widest label (argument or option) that still has its help on the same line.
  static let maximumLabelWidth = 24

  /// The top-level help: what the tool is and the list of its commands.
  ///
  /// ```
  /// OVERVIEW: Inspect and migrate EventGraph stores.
  ///
  /// USAGE: eventtool COMMAND [ARGUMENTS] [OPTIONS]
  ///
  /// COMMANDS:
  ///   init      Create a store with a model.
  ///   …
  /// ```
  public func usage() -> String {
    var lines = wrap("OVERVIEW: \(abstract)", hangingIndent: 2)
    lines.append("")
    lines.append("USAGE: \(toolName) COMMAND [ARGUMENTS] [OPTIONS]")
    lines.append("")
    lines.append("COMMANDS:")
    let rows = commands.map { (label: $0.name, help: $0.abstract) }
    lines += table(rows, labelWidth: labelWidth(rows.map(\.label)))
    lines.append("")
    lines += wrap(
      "See '\(toolName) \(Self.helpCommandName) COMMAND' or '\(toolName) COMMAND --help' "
        + "for the arguments and options of a command.",
      hangingIndent: 0)
    return lines.joined(separator: "\n")
  }

  /// The help of one command: overview, usage line, arguments, options (aligned) and
  /// examples.
  public func help(for command: CommandSpec) -> String {
    var lines = wrap("OVERVIEW: \(command.abstract)", hangingIndent: 2)
    if let discussion = command.discussion {
      lines.append("")
      for line in discussion.split(separator: "\n", omittingEmptySubsequences: false) {
        lines += wrap(String(line), hangingIndent: leadingSpaces(of: line))
      }
    }
    lines.append("")
    lines += wrap("USAGE: \(usageLine(for: command))", hangingIndent: 7)
    let argumentRows = command.positionals.map { (label: $0.name, help: $0.help) }
    let optionRows =
      command.options.map { (label: $0.synopsis, help: optionHelp($0)) } + [("-h, --help", "Show this help.")]
    let width = labelWidth((argumentRows + optionRows).map(\.label))
    if !argumentRows.isEmpty {
      lines.append("")
      lines.append("ARGUMENTS:")
      lines += table(argumentRows, labelWidth: width)
    }
    lines.append("")
    lines.append("OPTIONS:")
    lines += table(optionRows, labelWidth: width)
    if !command.examples.isEmpty {
      lines.append("")
      lines.append("EXAMPLES:")
      lines += command.examples.map { "  " + $0 }
    }
    return lines.joined(separator: "\n")
  }

  /// The one-line synopsis: `eventtool import STORE FILE [--batch N]`.
  ///
  /// Required options come right after the arguments, without brackets; a repeatable
  /// option is followed by `...`.
  public func usageLine(for command: CommandSpec) -> String {
    var words = [toolName, command.name]
    for positional in command.positionals {
      words.append(positional.isOptional ? "[\(positional.name)]" : positional.name)
    }
    for option in command.options where option.isRequired {
      words.append(option.synopsis + (option.isRepeatable ? " ..." : ""))
    }
    for option in command.options where !option.isRequired {
      words.append("[\(option.synopsis)]" + (option.isRepeatable ? " ..." : ""))
    }
    return words.joined(separator: " ")
  }

  /// An option's help with what the usage line cannot show.
  func optionHelp(_ option: OptionSpec) -> String {
    var notes: [String] = []
    if option.isRequired { notes.append("required") }
    if option.isRepeatable { notes.append("repeatable") }
    return notes.isEmpty ? option.help : "\(option.help) (\(notes.joined(separator: ", ")))"
  }

  // MARK: - Layout

  /// The width of the label column for `labels`: the widest that fits, capped.
  private func labelWidth(_ labels: [String]) -> Int {
    min(labels.map(\.count).max() ?? 0, Self.maximumLabelWidth)
  }

  /// Two columns, indented by 2: labels, then wrapped help aligned after the widest label.
  ///
  /// A label too wide for the column gets its help on the next line.
  private func table(_ rows: [(label: String, help: String)], labelWidth width: Int) -> [String] {
    let helpColumn = 2 + width + 2
    var lines: [String] = []
    for row in rows {
      let label = "  " + row.label
      var helpLines = wrap(row.help, width: Self.helpWidth - helpColumn, hangingIndent: 0)
      if helpLines.isEmpty { helpLines = [""] }
      if row.label.count > width {
        lines.append(label)
      } else {
        lines.append(label + String(repeating: " ", count: helpColumn - label.count) + helpLines.removeFirst())
      }
      lines += helpLines.map { String(repeating: " ", count: helpColumn) + $0 }
    }
    return lines.map(trimmingTrailingSpaces)
  }

  /// `text` broken into lines of at most `width` characters at spaces; the first line
  /// keeps its own indentation, the others are indented by `hangingIndent`.
  ///
  /// A word
  /// longer than a line stands alone.
  func wrap(_ text: String, width: Int = helpWidth, hangingIndent: Int) -> [String] {
    guard text.count > width else { return [text] }
    let continuation = String(repeating: " ", count: hangingIndent)
    var lines: [String] = []
    var line = String(repeating: " ", count: leadingSpaces(of: Substring(text)))
    var lineHasWord = false
    for word in text.split(separator: " ") {
      if !lineHasWord {
        line += word
        lineHasWord = true
      } else if line.count + 1 + word.count > width {
        lines.append(line)
        line = continuation + word
      } else {
        line += " " + word
      }
    }
    lines.append(line)
    return lines
  }

  private func leadingSpaces(of line: Substring) -> Int {
    line.prefix { $0 == " " }.count
  }

  private func trimmingTrailingSpaces(_ line: String) -> String {
    var line = Substring(line)
    while line.last == " " { line = line.dropLast() }
    return String(line)
  }
}
