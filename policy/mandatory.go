package policy

// Mandatory denies: names that are never writable inside any writable root
// or the home directory, whatever the settings say, because writing them is
// a way to run code later outside the sandbox (shell start-up files, git
// hooks and config, editor and agent task folders) or to change the tools'
// own behaviour (.ripgreprc, .mcp.json).
var (
	// MandatoryDenyFiles are protected wherever they appear.
	MandatoryDenyFiles = []string{
		".bashrc", ".bash_profile", ".bash_login", ".bash_logout",
		".zshrc", ".zprofile", ".profile",
		".gitconfig", ".gitmodules", ".ripgreprc", ".mcp.json",
		// git reads its configuration (hooks path, fsmonitor, ...) from the
		// common directory when .git/commondir names one, and from
		// config.worktree: either would replace .git/config.
		".git/commondir", ".git/config.worktree",
	}
	// MandatoryDenyDirs are protected with everything beneath them. Entries
	// with a "/" name a directory inside another (".git/hooks").
	MandatoryDenyDirs = []string{
		".vscode", ".idea", ".claude/commands", ".claude/agents", ".git/hooks",
	}
)

// gitConfig is protected unless filesystem.allowGitConfig is true.
const gitConfig = ".git/config"

// MandatoryDenyNames returns every protected name for this policy, files
// first: the list the Linux backend masks and the guard refuses.
func (p *Policy) MandatoryDenyNames() []string {
	names := append(append([]string(nil), MandatoryDenyFiles...), MandatoryDenyDirs...)
	if !p.Settings.Filesystem.AllowGitConfig {
		names = append(names, gitConfig)
	}
	return names
}

// SettingsFiles are the settings files the sandbox must never let the
// command write: the one in force and ~/.srt-settings.json, which picks the
// policy of every later run without -s. A command that could rewrite either
// would choose its own next sandbox.
func (p *Policy) SettingsFiles() []string {
	var out []string
	if p.SourceFile != "" {
		out = append(out, p.SourceFile)
	}
	if p.Env.Home != "" {
		def := p.Env.Home + "/.srt-settings.json"
		if def != p.SourceFile {
			out = append(out, def)
		}
	}
	return out
}
