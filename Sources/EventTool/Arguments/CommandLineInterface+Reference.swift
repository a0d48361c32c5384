extension CommandLineInterface {
  // MARK: - Markdown

  /// The command-line reference as Markdown: the command list, then one section per
  /// command with its usage, arguments, options and examples.
  public func markdownReference() -> String {
    var lines = ["# `\(toolName)`", "", abstract, "", "| Command | Summary |", "| --- | --- |"]
    for command in commands {
      lines.append("| [`\(command.name)`](#\(anchor(for: command))) | \(tableCell(command.abstract)) |")
    }
    for command in commands {
      lines += ["", "## `\(toolName) \(command.name)`", "", command.abstract]
      if let discussion = command.discussion {
        lines += ["", discussion]
      }
      lines += ["", "```", usageLine(for: command), "```"]
      if !command.positionals.isEmpty {
        lines += ["", "| Argument | Description |", "| --- | --- |"]
        for positional in command.positionals {
          let optional = positional.isOptional ? " (optional)" : ""
          lines.append("| `\(positional.name)` | \(tableCell(positional.help + optional)) |")
        }
      }
      lines += ["", "| Option | Description |", "| --- | --- |"]
      for option in command.options {
        lines.append("| `\(option.synopsis)` | \(tableCell(optionHelp(option))) |")
      }
      lines.append("| `-h`, `--help` | Show the help of this command. |")
      if !command.examples.isEmpty {
        lines += ["", "Examples:", "", "```"] + command.examples + ["```"]
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The GitHub-style anchor of a command's heading "`eventtool import`".
  private func anchor(for command: CommandSpec) -> String {
    "\(toolName) \(command.name)".lowercased().map { $0 == " " ? "-" : String($0) }
      .filter { $0 == "-" || $0 == "_" || $0.allSatisfy { $0.isLetter || $0.isNumber } }
      .joined()
  }

  /// Text made safe for one cell of a Markdown table.
  private func tableCell(_ text: String) -> String {
    text.replacingAll("|", with: "\\|").replacingAll("\n", with: " ")
  }

  // MARK: - Bash completion

  /// A bash completion script: command names after the tool, each command's options after
  /// a `-`, and the shell's file-name completion for arguments and option values.
  ///
  /// Install it as a file in `/etc/bash_completion.d/`, or `source` it from `~/.bashrc`.
  public func bashCompletionScript() -> String {
    let function = "_" + toolName.map { $0.isLetter || $0.isNumber ? String($0) : "_" }.joined()
    let commandNames = commands.map(\.name).joined(separator: " ")
    var lines = [
      "# bash completion for \(toolName), generated from its command descriptions.",
      "\(function)() {",
      "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"",
      "  local prev=\"${COMP_WORDS[COMP_CWORD-1]}\"",
      "  COMPREPLY=()",
      "  if [[ $COMP_CWORD -eq 1 ]]; then",
      "    COMPREPLY=($(compgen -W \"\(commandNames) --help\" -- \"$cur\"))",
      "    return 0",
      "  fi",
      "  local options=\"\"",
      "  case \"${COMP_WORDS[1]}\" in",
    ]
    for command in commands {
      lines.append("    \(command.name))")
      if command.name == Self.helpCommandName {
        lines += [
          "      if [[ $COMP_CWORD -eq 2 ]]; then",
          "        COMPREPLY=($(compgen -W \"\(commandNames)\" -- \"$cur\"))",
          "      fi",
          "      return 0",
          "      ;;",
        ]
        continue
      }
      let valued = command.options.filter { !$0.isFlag }.map { "--\($0.name)" }
      if !valued.isEmpty {
        // After an option that takes a value, leave COMPREPLY empty: bash then falls
        // back to file names (`-o default`).
        lines += [
          "      case \"$prev\" in",
          "        \(valued.joined(separator: "|"))) return 0 ;;",
          "      esac",
        ]
      }
      let names = command.options.map { "--\($0.name)" } + ["--help"]
      lines.append("      options=\"\(names.joined(separator: " "))\"")
      lines.append("      ;;")
    }
    lines += [
      "    *)",
      "      return 0",
      "      ;;",
      "  esac",
      "  if [[ \"$cur\" == -* ]]; then",
      "    COMPREPLY=($(compgen -W \"$options\" -- \"$cur\"))",
      "  fi",
      "  return 0",
      "}",
      "complete -o default -F \(function) \(toolName)",
    ]
    return lines.joined(separator: "\n") + "\n"
  }
}

extension String {
  /// This string with every occurrence of `target` replaced (no Foundation needed).
  fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
    var result = ""
    for character in self {
      if character == target { result += replacement } else { result.append(character) }
    }
    return result
  }
}
