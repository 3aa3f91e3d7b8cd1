from placement_cli.app.launch import main

# Guarded: a measuring process of `execute --forks` (started by `spawn`) imports this
# module again under another name, and must not run the command line a second time.
if __name__ == "__main__":
    main()
