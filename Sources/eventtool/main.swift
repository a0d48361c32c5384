import EventTool
import Foundation

exit(EventTool().run(Array(CommandLine.arguments.dropFirst())))
