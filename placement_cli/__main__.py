from placement_cli.cli import main

main()
